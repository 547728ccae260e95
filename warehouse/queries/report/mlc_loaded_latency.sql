-- report/mlc_loaded_latency: MLC's loaded-latency ladders, largest delay (idle) first, of a batch of runs
-- (the runs in chosen_runs).
SELECT *
FROM mlc_loaded_latency
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY path, run_index, delay_cycles DESC
