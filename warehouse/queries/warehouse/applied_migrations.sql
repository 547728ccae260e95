-- The migrations recorded in the warehouse: version and file name.
SELECT version, name FROM schema_migrations ORDER BY version
