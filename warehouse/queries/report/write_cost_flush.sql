-- report/write_cost_flush: the clflush+mfence round trip, of a batch of runs (the runs in chosen_runs); on a
-- host with more than one core kind, each kind's (core_kind, fastest kind first;
-- NULL on a host with one kind or no topology in its facts).
SELECT f.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM write_cost_flush AS f
LEFT JOIN cpu_core_kinds AS k ON k.run_id = f.run_id AND k.host = f.host AND k.cpu = f.cpu
WHERE (f.run_id, f.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), f.variant
