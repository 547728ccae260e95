-- The columns of a table of the connection's current database in order, with their types (?: table name).
SELECT column_name, data_type FROM information_schema.columns
WHERE table_catalog = current_database() AND table_schema = 'main' AND table_name = ? ORDER BY ordinal_position
