-- SAXPY ns per update and slowdown per stride. Parameters: run_id, host.
-- Only the fastest core kind measured (cpu_core_kinds), where a host has more than one.
SELECT stride_elements, ns_per_update, slowdown_vs_stride1
FROM saxpy_stride AS v
LEFT JOIN cpu_core_kinds k ON k.run_id = v.run_id AND k.host = v.host AND k.cpu = v.cpu
WHERE v.run_id = ? AND v.host = ?
QUALIFY coalesce(k.kind_rank, 0) = min(coalesce(k.kind_rank, 0)) OVER ()
ORDER BY stride_elements
