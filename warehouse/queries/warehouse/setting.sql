-- One DuckDB setting's current value, as text.
SELECT value FROM duckdb_settings() WHERE name = ?
