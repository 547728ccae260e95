-- The hosts of a batch's bundles (?: a JSON list of {host, first_seen}): a host's first bundle registers it,
-- later ones leave its row alone.
INSERT INTO hosts
SELECT h.host, h.first_seen::TIMESTAMP
FROM (SELECT unnest(from_json(?, '[{"host": "VARCHAR", "first_seen": "VARCHAR"}]'), recursive := true)) AS h
ON CONFLICT (host) DO NOTHING
