-- The run's idle DRAM latency where a one-node host has no NUMA matrix: zero_queue's DRAM median. Parameters:
-- run_id, host.
SELECT min(median_ns) FROM zero_queue_levels WHERE run_id = ? AND host = ? AND level = 'DRAM'
