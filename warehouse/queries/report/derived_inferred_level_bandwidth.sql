-- report/derived_inferred_level_bandwidth: the inferred_level_bandwidth rows of a batch of runs (their
-- run_ids, their hosts), per op and store, level by level.
SELECT *
FROM inferred_level_bandwidth
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY op, store, level
