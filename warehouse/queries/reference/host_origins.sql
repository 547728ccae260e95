-- The origins of a host's runs (playbook, import, reference): a reference curve must not be loaded under the
-- name of a lab machine. Parameters: host.
SELECT DISTINCT coalesce(origin, 'playbook') FROM runs WHERE host = ?
