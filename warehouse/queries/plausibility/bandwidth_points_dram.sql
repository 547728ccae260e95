-- The bandwidth kernels' points at DRAM size. Parameters: run_id, host, DRAM-sized bytes.
SELECT experiment, op, store, pattern, stride_bytes, threads, working_set_bytes, median_gb_s
FROM bandwidth_points
WHERE run_id = ? AND host = ? AND working_set_bytes >= ?
