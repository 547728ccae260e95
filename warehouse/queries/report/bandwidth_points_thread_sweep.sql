-- report/bandwidth_points_thread_sweep: bandwidth per thread count (experiment thread_sweep), of a batch of
-- runs (the runs in chosen_runs).
SELECT *
FROM bandwidth_points
WHERE (run_id, host) IN (FROM chosen_runs) AND experiment = 'thread_sweep'
ORDER BY op, threads
