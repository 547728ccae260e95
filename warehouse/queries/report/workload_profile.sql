-- report/workload_profile: one row per workload, of a batch of runs (their run_ids, their hosts).
SELECT *
FROM workload_profile
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY workload
