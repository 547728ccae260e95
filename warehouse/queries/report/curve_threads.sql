-- report/curve_threads: read GB/s (all threads together) per thread count of the thread sweep, of the runs
-- in chosen_runs (columns as report/curve_latency).
SELECT run_id, host, threads AS point, threads AS x, median_gb_s AS y
FROM bandwidth_points
WHERE (run_id, host) IN (FROM chosen_runs) AND experiment = 'thread_sweep' AND op = 'read' AND store = 'none'
  AND median_gb_s > 0
ORDER BY run_id, host, x
