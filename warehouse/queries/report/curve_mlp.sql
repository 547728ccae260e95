-- report/curve_mlp: memory-level parallelism MLP(k) per number of interleaved chains k, of the runs in
-- chosen_runs (columns as report/curve_latency).
SELECT run_id, host, chains AS point, chains AS x, mlp AS y
FROM mlp_curve
WHERE (run_id, host) IN (FROM chosen_runs) AND mlp IS NOT NULL
ORDER BY run_id, host, x
