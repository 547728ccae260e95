-- report/mlc_bandwidth: MLC's bandwidth per mode and read-write mix, of a batch of runs (the runs in
-- chosen_runs).
SELECT *
FROM mlc_bandwidth
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY mode, path, run_index, row_index
