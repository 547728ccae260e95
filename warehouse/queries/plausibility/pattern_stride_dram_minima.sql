-- pattern_stride's random points at DRAM size. Parameters: run_id, host, DRAM-sized bytes.
SELECT stride_bytes, min_ns
FROM pattern_stride_latency
WHERE run_id = ? AND host = ? AND pattern IN ('random', 'random_cycle') AND footprint_bytes >= ?
