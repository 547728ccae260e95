-- report/mlp_curve: MLP(k) per number of interleaved chains, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM mlp_curve
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY chains
