-- report/c2c_matrix: one-way core-to-core latency per ordered CPU pair, of a batch of runs (the runs in
-- chosen_runs).
SELECT *
FROM c2c_matrix
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY cpu_a, cpu_b
