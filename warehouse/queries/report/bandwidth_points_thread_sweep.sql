-- report/bandwidth_points_thread_sweep: bandwidth per thread count (experiment thread_sweep), of a batch of
-- runs (their run_ids, their hosts).
SELECT *
FROM bandwidth_points
WHERE list_contains(?, run_id) AND list_contains(?, host) AND experiment = 'thread_sweep'
ORDER BY op, threads
