-- report/cache_levels: the sysfs caches of a batch of runs (their run_ids, their hosts).
SELECT *
FROM cache_levels
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY cache_index
