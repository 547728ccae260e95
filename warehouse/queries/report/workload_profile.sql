-- report/workload_profile: one row per workload, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM workload_profile
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY workload
