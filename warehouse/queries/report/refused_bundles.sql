-- report/refused_bundles: the bundles ingest refused, newest first, for the fleet page's warning.
SELECT bundle_path, run_id, host, reason, refused_at
FROM refused_bundles
ORDER BY refused_at DESC, bundle_path
