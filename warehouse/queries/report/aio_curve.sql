-- report/aio_curve: reads per engine and queue depth, of a batch of runs (their run_ids, their hosts).
SELECT *
FROM aio_curve
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY engine, queue_depth
