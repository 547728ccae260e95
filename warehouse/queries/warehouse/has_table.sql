-- Whether the warehouse has a table of this name (?: table name).
SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?
