-- report/tlb_reach: ns per access vs pages touched, per page size, of a batch of runs (the runs in
-- chosen_runs); on a host with more than one core kind, each kind's curves (core_kind, fastest kind first;
-- NULL on a host with one kind or no topology in its facts).
SELECT t.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM tlb_reach AS t
LEFT JOIN cpu_core_kinds AS k ON k.run_id = t.run_id AND k.host = t.host AND k.cpu = t.cpu
WHERE (t.run_id, t.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), t.page_size, t.pages
