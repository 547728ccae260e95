-- The latency sweep's random-cycle points at DRAM size. Parameters: run_id, host, DRAM-sized bytes.
SELECT page_policy, working_set_bytes, min_ns
FROM latency_curve
WHERE run_id = ? AND host = ? AND coalesce(pattern, 'random_cycle') = 'random_cycle' AND working_set_bytes >= ?
