-- Record one applied migration (?: version, file name).
INSERT INTO schema_migrations VALUES (?, ?, current_timestamp::TIMESTAMP)
