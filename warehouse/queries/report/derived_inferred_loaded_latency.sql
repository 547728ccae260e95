-- report/derived_inferred_loaded_latency: the inferred_loaded_latency rows of a batch of runs (the runs in
-- chosen_runs), per source, output and traffic.
SELECT *
FROM inferred_loaded_latency
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY source, path, run_index, traffic
