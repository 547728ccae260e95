-- The run's data/unified cache size per level from sysfs, smallest level first. Parameters: run_id, host.
SELECT max(size_bytes)
FROM cache_levels
WHERE run_id = ? AND host = ? AND type <> 'Instruction'
GROUP BY level
ORDER BY level
