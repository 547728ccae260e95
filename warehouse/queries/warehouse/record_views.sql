-- Record the views just created from their files (?: list of view names, list of their files' sha256).
INSERT OR REPLACE INTO schema_views
SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), current_timestamp::TIMESTAMP
