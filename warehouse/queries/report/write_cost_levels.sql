-- report/write_cost_levels: read vs read-modify-write per level, caches by sysfs size then DRAM, of a batch
-- of runs (the runs in chosen_runs); on a host with more than one core kind, each kind's levels (core_kind,
-- fastest kind first; NULL on a host with one kind or no topology in its facts).
SELECT w.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM write_cost_levels AS w
LEFT JOIN cpu_core_kinds AS k ON k.run_id = w.run_id AND k.host = w.host AND k.cpu = w.cpu
WHERE (w.run_id, w.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), w.level = 'DRAM', w.sysfs_size_bytes
