-- The single-thread working-set sweep of the bandwidth experiment. Parameters: run_id, host.
-- Each row's core kind as in latency_minima.sql: kind_rank, core_kind, cpu.
SELECT coalesce(k.kind_rank, 0), CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END,
       CASE WHEN k.kinds_on_host > 1 THEN v.cpu END,
       op, store, working_set_bytes, median_gb_s
FROM bandwidth_points AS v
LEFT JOIN cpu_core_kinds k ON k.run_id = v.run_id AND k.host = v.host AND k.cpu = v.cpu
WHERE v.run_id = ? AND v.host = ? AND experiment = 'bandwidth' AND threads = 1
