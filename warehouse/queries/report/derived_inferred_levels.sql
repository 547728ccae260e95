-- report/derived_inferred_levels: the inferred_levels rows of a batch of runs (the runs in chosen_runs),
-- per page policy (THP first), smallest level first; relative_to_l1 where the run is a reference host's relative
-- curve (ns over L1, tinymembench), whose latencies are not comparable with absolute ones.
SELECT l.*, coalesce(TRY_CAST(r.reference ->> '$.relative' AS BOOLEAN), false) AS relative_to_l1
FROM inferred_levels AS l
JOIN runs AS r USING (run_id, host)
WHERE (l.run_id, l.host) IN (FROM chosen_runs)
ORDER BY l.page_policy <> 'thp', l.page_policy, l.level_index
