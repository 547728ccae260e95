-- refused_bundles: the bundles `fleetscope ingest` refused and has not loaded since, newest first.
-- run_id and host come from the bundle's folder (results/<run_id>/<host>/) when its names are a
-- run id and a host name, else NULL; reason is the refusal (capped, control characters escaped).
CREATE OR REPLACE VIEW refused_bundles AS
SELECT bundle_path, run_id, host, reason, refused_at
FROM bundle_refusals
ORDER BY refused_at DESC, bundle_path
