-- report/affinity_threads: every thread's throughput per placement and repeat, of a batch of runs (their
-- run_ids, their hosts).
SELECT *
FROM affinity_threads
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY workload, placement, repeat, thread
