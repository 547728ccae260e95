-- report/curve_mlc: Intel MLC's loaded latency (ns) against the bandwidth drawn (GB/s) per injected delay,
-- of the first ladder of each run (its first output file and run), of the runs in chosen_runs (columns as
-- report/curve_latency).
SELECT run_id, host, delay_cycles AS point, bandwidth_mb_s / 1000 AS x, latency_ns AS y
FROM mlc_loaded_latency
WHERE (run_id, host) IN (FROM chosen_runs) AND latency_ns > 0 AND bandwidth_mb_s IS NOT NULL
QUALIFY (path, run_index) = first_value((path, run_index)) OVER (PARTITION BY run_id, host ORDER BY path, run_index)
ORDER BY run_id, host, x
