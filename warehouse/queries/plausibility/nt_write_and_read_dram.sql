-- Single-thread sequential read-only and non-temporal write-only GB/s at DRAM size, best per experiment, op,
-- store and working set. Parameters: run_id, host, DRAM-sized bytes.
SELECT experiment, op, store, working_set_bytes, max(median_gb_s)
FROM bandwidth_points
WHERE run_id = ? AND host = ? AND threads = 1 AND pattern = 'sequential' AND stride_bytes = 64
  AND working_set_bytes >= ?
  AND ((op IN ('read', 'mix') AND write_lines = 0) OR (store = 'nt' AND (op = 'write' OR read_lines = 0)))
GROUP BY ALL
