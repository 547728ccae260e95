-- report/curve_bandwidth: read GB/s per working set of the bandwidth sweep with regular loads and the
-- fewest threads it ran (one), of the fastest core kind where a host measured several (cpu_core_kinds), of the
-- runs in chosen_runs (columns as report/curve_latency).
SELECT b.run_id, b.host, b.working_set_bytes AS point, b.working_set_bytes AS x, b.median_gb_s AS y
FROM bandwidth_points AS b
LEFT JOIN cpu_core_kinds AS k ON k.run_id = b.run_id AND k.host = b.host AND k.cpu = b.cpu
WHERE (b.run_id, b.host) IN (FROM chosen_runs) AND b.experiment = 'bandwidth' AND b.op = 'read' AND b.store = 'none'
  AND b.median_gb_s > 0
QUALIFY coalesce(k.kind_rank, 0) = min(coalesce(k.kind_rank, 0)) OVER (PARTITION BY b.run_id, b.host)
    AND b.threads = min(b.threads) OVER (PARTITION BY b.run_id, b.host)
ORDER BY b.run_id, b.host, x
