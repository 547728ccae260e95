-- MLC bandwidth (MB/s) with DRAM-sized buffers. Parameters: run_id, host, DRAM-sized bytes.
SELECT mode, coalesce(traffic_label, traffic), bandwidth_mb_s
FROM mlc_bandwidth
WHERE run_id = ? AND host = ? AND buffer_bytes >= ?
