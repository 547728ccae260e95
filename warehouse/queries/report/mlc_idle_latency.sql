-- report/mlc_idle_latency: MLC's idle latency per level, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM mlc_idle_latency
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY path, run_index, buffer_bytes
