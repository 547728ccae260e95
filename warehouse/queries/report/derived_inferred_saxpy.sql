-- report/derived_inferred_saxpy: the inferred_saxpy rows of a batch of runs (the runs in chosen_runs), fastest
-- core kind first (cpu_core_kinds).
SELECT s.*
FROM inferred_saxpy AS s
LEFT JOIN cpu_core_kinds AS k ON k.run_id = s.run_id AND k.host = s.host AND k.cpu = s.cpu
WHERE (s.run_id, s.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), s.core_kind, s.strides
