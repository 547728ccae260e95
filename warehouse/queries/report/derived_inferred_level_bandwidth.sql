-- report/derived_inferred_level_bandwidth: the inferred_level_bandwidth rows of a batch of runs (the runs in
-- chosen_runs), fastest core kind first (cpu_core_kinds), per op and store, level by level.
SELECT b.*
FROM inferred_level_bandwidth AS b
LEFT JOIN cpu_core_kinds AS k ON k.run_id = b.run_id AND k.host = b.host AND k.cpu = b.cpu
WHERE (b.run_id, b.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), b.core_kind, b.op, b.store, b.level
