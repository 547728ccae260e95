-- The views the warehouse holds (created by fleetscope or not).
SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'
