-- report/aio_curve: reads per engine and queue depth, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM aio_curve
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY engine, queue_depth
