-- report/curve_loaded_latency: chase latency against the read-traffic load threads' GB/s, from the idle
-- point through each injected delay, of the runs in chosen_runs (columns as report/curve_latency; a point
-- is an injected delay, the idle point -1).
SELECT run_id, host, coalesce(delay, -1) AS point, bandwidth_gb_s AS x, latency_ns AS y
FROM loaded_latency_curve
WHERE (run_id, host) IN (FROM chosen_runs) AND traffic IN ('idle', 'read') AND latency_ns > 0
ORDER BY run_id, host, x
