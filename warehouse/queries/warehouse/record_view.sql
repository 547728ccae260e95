-- Record a view just created from its file (?: view name, sha256 of the file).
INSERT OR REPLACE INTO schema_views VALUES (?, ?, current_timestamp::TIMESTAMP)
