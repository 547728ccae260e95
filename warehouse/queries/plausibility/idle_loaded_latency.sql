-- The loaded_latency kernel's idle point. Parameters: run_id, host.
SELECT min(latency_ns) FROM loaded_latency_curve WHERE run_id = ? AND host = ? AND traffic = 'idle'
