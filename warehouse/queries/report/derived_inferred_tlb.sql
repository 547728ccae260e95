-- report/derived_inferred_tlb: the inferred_tlb rows of a batch of runs (the runs in chosen_runs), fastest core
-- kind first (cpu_core_kinds), per page size.
SELECT t.*
FROM inferred_tlb AS t
LEFT JOIN cpu_core_kinds AS k ON k.run_id = t.run_id AND k.host = t.host AND k.cpu = t.cpu
WHERE (t.run_id, t.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), t.core_kind, t.page_bytes, t.page_size
