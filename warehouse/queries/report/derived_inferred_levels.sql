-- report/derived_inferred_levels: the inferred_levels rows of a batch of runs (their run_ids, their hosts),
-- per page policy (THP first), smallest level first.
SELECT *
FROM inferred_levels
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY page_policy <> 'thp', page_policy, level_index
