-- MLC loaded-latency bandwidth (MB/s) with DRAM-sized buffers. Parameters: run_id, host, DRAM-sized bytes.
SELECT delay_cycles, path, run_index, bandwidth_mb_s
FROM mlc_loaded_latency
WHERE run_id = ? AND host = ? AND buffer_bytes >= ? AND bandwidth_mb_s IS NOT NULL
