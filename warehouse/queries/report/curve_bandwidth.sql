-- report/curve_bandwidth: read GB/s per working set of the bandwidth sweep with regular loads and the
-- fewest threads it ran (one), of the runs in chosen_runs (columns as report/curve_latency).
SELECT run_id, host, working_set_bytes AS point, working_set_bytes AS x, median_gb_s AS y
FROM bandwidth_points
WHERE (run_id, host) IN (FROM chosen_runs) AND experiment = 'bandwidth' AND op = 'read' AND store = 'none'
  AND median_gb_s > 0
QUALIFY threads = min(threads) OVER (PARTITION BY run_id, host)
ORDER BY run_id, host, x
