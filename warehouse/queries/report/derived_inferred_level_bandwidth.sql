-- report/derived_inferred_level_bandwidth: the inferred_level_bandwidth rows of a batch of runs (the runs in
-- chosen_runs), per op and store, level by level.
SELECT *
FROM inferred_level_bandwidth
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY op, store, level
