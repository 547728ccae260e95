-- report/mlp_curve: MLP(k) per number of interleaved chains, of a batch of runs (their run_ids, their
-- hosts).
SELECT *
FROM mlp_curve
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY chains
