-- report/mlc_matrix: MLC's NUMA latency/bandwidth and cache-to-cache matrices, of a batch of runs (the runs
-- in chosen_runs).
SELECT *
FROM mlc_matrix
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY mode, path, run_index, row_index
