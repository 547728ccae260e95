-- report/derived_inferred_levels: the inferred_levels rows of a batch of runs (the runs in chosen_runs),
-- fastest core kind first (cpu_core_kinds; one kind on most hosts), per page policy (THP first), smallest level
-- first; relative_to_l1 where the run is a reference host's relative curve (ns over L1, tinymembench), whose
-- latencies are not comparable with absolute ones.
SELECT l.*, coalesce(TRY_CAST(r.reference ->> '$.relative' AS BOOLEAN), false) AS relative_to_l1
FROM inferred_levels AS l
JOIN runs AS r USING (run_id, host)
LEFT JOIN cpu_core_kinds AS k ON k.run_id = l.run_id AND k.host = l.host AND k.cpu = l.cpu
WHERE (l.run_id, l.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), l.core_kind, l.page_policy <> 'thp', l.page_policy, l.level_index
