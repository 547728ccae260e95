-- report/cache_levels: the sysfs caches of a batch of runs (the runs in chosen_runs).
SELECT *
FROM cache_levels
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY cache_index
