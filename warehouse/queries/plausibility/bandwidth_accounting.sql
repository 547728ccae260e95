-- The bandwidth kernels' line accounting per point. Parameters: run_id, host.
SELECT experiment, op, pattern, stride_bytes, working_set_bytes, lines_per_pass, bytes_per_pass
FROM bandwidth_points
WHERE run_id = ? AND host = ?
