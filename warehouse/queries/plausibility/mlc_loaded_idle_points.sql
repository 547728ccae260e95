-- The lightest-load latency of each MLC loaded-latency ladder. Parameters: run_id, host.
SELECT path, run_index, traffic, arg_min(latency_ns, bandwidth_mb_s)
FROM mlc_loaded_latency
WHERE run_id = ? AND host = ? AND latency_ns IS NOT NULL AND bandwidth_mb_s IS NOT NULL
GROUP BY ALL
