-- SAXPY ns per update and slowdown per stride. Parameters: run_id, host.
-- Each row's core kind as in latency_minima.sql: kind_rank, core_kind, cpu.
SELECT coalesce(k.kind_rank, 0), CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END,
       CASE WHEN k.kinds_on_host > 1 THEN v.cpu END,
       stride_elements, ns_per_update, slowdown_vs_stride1
FROM saxpy_stride AS v
LEFT JOIN cpu_core_kinds k ON k.run_id = v.run_id AND k.host = v.host AND k.cpu = v.cpu
WHERE v.run_id = ? AND v.host = ?
ORDER BY stride_elements
