-- The views the warehouse (the connection's current database) holds (created by fleetscope or not).
SELECT view_name FROM duckdb_views() WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'
