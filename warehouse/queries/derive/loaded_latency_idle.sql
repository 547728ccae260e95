-- The loaded_latency kernel's idle point: the chase with no load threads, the idle latency every traffic's
-- curve rises from (the median of such points, were there several). Parameters: run_id, host.
SELECT median(latency_ns)
FROM loaded_latency_curve
WHERE run_id = ? AND host = ? AND load_threads = 0
