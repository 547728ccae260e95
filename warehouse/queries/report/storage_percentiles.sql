-- report/storage_percentiles: storage latency percentiles per job and direction, of a batch of runs (the runs
-- in chosen_runs).
SELECT *
FROM storage_percentiles
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY job, direction, percentile
