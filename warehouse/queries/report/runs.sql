-- report/runs: every loaded run of every host, newest first per host, with what decides whether its page
-- must be written again (the bundle's content hash, when it was loaded, the inference version).
SELECT o.*, r.content_sha256, i.inference_version, i.computed_at AS inferred_at
FROM runs_overview AS o
JOIN runs AS r USING (run_id, host)
LEFT JOIN inference_runs AS i USING (run_id, host)
ORDER BY o.host, o.started_at DESC, o.run_id DESC
