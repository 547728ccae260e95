-- Every column of the warehouse's tables and views with its comment (NULL when it has none).
SELECT table_name, column_name, comment FROM duckdb_columns() WHERE NOT internal AND schema_name = 'main'
