-- report/affinity_threads: every thread's throughput per placement and repeat, of a batch of runs (the runs
-- in chosen_runs).
SELECT *
FROM affinity_threads
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY workload, placement, repeat, thread
