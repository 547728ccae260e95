-- The loaded_latency kernel's loaded points: (GB/s, ns) per traffic. Parameters: run_id, host.
SELECT traffic, bandwidth_gb_s, latency_ns
FROM loaded_latency_curve
WHERE run_id = ? AND host = ? AND load_threads > 0
