-- report/curve_aio: MB/s of random reads per queue depth with io_uring (the first engine in name order where
-- a run has no io_uring), of the runs in chosen_runs (columns as report/curve_latency).
SELECT run_id, host, queue_depth AS point, queue_depth AS x, median_mb_s AS y
FROM aio_curve
WHERE (run_id, host) IN (FROM chosen_runs) AND queue_depth > 0 AND median_mb_s > 0
QUALIFY engine = first_value(engine) OVER (PARTITION BY run_id, host ORDER BY engine <> 'io_uring', engine)
ORDER BY run_id, host, x
