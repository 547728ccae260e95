-- report/workload_profile: one row per workload, of a batch of runs (the runs in chosen_runs), the reference
-- workload first.
SELECT *
FROM workload_profile
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY NOT reference, workload
