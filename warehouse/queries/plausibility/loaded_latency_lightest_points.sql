-- The loaded_latency kernel's lightest loaded point per traffic (delay and ns). Parameters: run_id, host.
SELECT traffic, arg_min(delay, bandwidth_gb_s), arg_min(latency_ns, bandwidth_gb_s)
FROM loaded_latency_curve
WHERE run_id = ? AND host = ? AND load_threads > 0
GROUP BY traffic
