-- The single-thread working-set sweep of the bandwidth experiment. Parameters: run_id, host.
-- Only the fastest core kind measured (cpu_core_kinds), where a host has more than one.
SELECT op, store, working_set_bytes, median_gb_s
FROM bandwidth_points AS v
LEFT JOIN cpu_core_kinds k ON k.run_id = v.run_id AND k.host = v.host AND k.cpu = v.cpu
WHERE v.run_id = ? AND v.host = ? AND experiment = 'bandwidth' AND threads = 1
QUALIFY coalesce(k.kind_rank, 0) = min(coalesce(k.kind_rank, 0)) OVER ()
