-- Every table and view of the warehouse with its comment (NULL when it has none).
SELECT table_name AS name, 'TABLE' AS kind, comment FROM duckdb_tables() WHERE NOT internal AND schema_name = 'main'
UNION ALL
SELECT view_name, 'VIEW', comment FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'
