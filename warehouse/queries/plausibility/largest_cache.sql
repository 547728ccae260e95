-- The run's largest data/unified cache from sysfs. Parameters: run_id, host.
SELECT max(size_bytes) FROM cache_levels WHERE run_id = ? AND host = ? AND type <> 'Instruction'
