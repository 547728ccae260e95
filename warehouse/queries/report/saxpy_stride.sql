-- report/saxpy_stride: SAXPY time per update per stride, of a batch of runs (the runs in chosen_runs); on a
-- host with more than one core kind, each kind's strides (core_kind, fastest kind first; NULL on a host
-- with one kind or no topology in its facts).
SELECT s.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM saxpy_stride AS s
LEFT JOIN cpu_core_kinds AS k ON k.run_id = s.run_id AND k.host = s.host AND k.cpu = s.cpu
WHERE (s.run_id, s.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), s.stride_elements
