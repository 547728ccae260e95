-- report/derived_inferred_loaded_latency: the inferred_loaded_latency rows of a batch of runs (their
-- run_ids, their hosts), per source, output and traffic.
SELECT *
FROM inferred_loaded_latency
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY source, path, run_index, traffic
