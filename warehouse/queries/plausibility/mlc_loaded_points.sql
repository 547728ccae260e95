-- Every point of MLC's loaded-latency ladders: output, run, traffic, delay and ns. Parameters: run_id, host.
SELECT path, run_index, traffic, delay_cycles, latency_ns
FROM mlc_loaded_latency
WHERE run_id = ? AND host = ? AND latency_ns IS NOT NULL
ORDER BY path, run_index, traffic, delay_cycles
