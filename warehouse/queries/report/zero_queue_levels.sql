-- report/zero_queue_levels: idle latency per level, caches by sysfs size then DRAM, of a batch of runs
-- (the runs in chosen_runs).
SELECT *
FROM zero_queue_levels
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY level = 'DRAM', sysfs_size_bytes
