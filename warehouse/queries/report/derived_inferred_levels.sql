-- report/derived_inferred_levels: the inferred_levels rows of a batch of runs (the runs in chosen_runs),
-- per page policy (THP first), smallest level first.
SELECT *
FROM inferred_levels
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY page_policy <> 'thp', page_policy, level_index
