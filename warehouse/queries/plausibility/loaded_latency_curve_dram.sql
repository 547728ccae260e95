-- The loaded_latency kernel's loaded points at DRAM size. Parameters: run_id, host, DRAM-sized bytes.
SELECT traffic, delay, bandwidth_gb_s
FROM loaded_latency_curve
WHERE run_id = ? AND host = ? AND working_set_bytes >= ? AND load_threads > 0
