-- Whether the warehouse (the connection's current database) has a table of this name (?: table name).
SELECT count(*) FROM information_schema.tables
WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = ?
