-- report/write_cost_levels: read vs read-modify-write per level, caches by sysfs size then DRAM, of a batch
-- of runs (their run_ids, their hosts).
SELECT *
FROM write_cost_levels
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY level = 'DRAM', sysfs_size_bytes
