-- report/zero_queue_levels: idle latency per level, caches by sysfs size then DRAM, of a batch of runs
-- (the runs in chosen_runs); on a host with more than one core kind, each kind's levels (core_kind,
-- fastest kind first; NULL on a host with one kind or no topology in its facts).
SELECT z.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM zero_queue_levels AS z
LEFT JOIN cpu_core_kinds AS k ON k.run_id = z.run_id AND k.host = z.host AND k.cpu = z.cpu
WHERE (z.run_id, z.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), z.level = 'DRAM', z.sysfs_size_bytes
