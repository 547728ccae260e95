-- The hosts of a batch's runs (?: a JSON list of {run_id, host}; ?: loaded_at): a host's first bundle
-- registers it, later ones leave its row alone.
INSERT INTO hosts
SELECT DISTINCT host, ?::TIMESTAMP
FROM (SELECT unnest(from_json(?, '[{"run_id": "VARCHAR", "host": "VARCHAR"}]'), recursive := true))
ON CONFLICT (host) DO NOTHING
