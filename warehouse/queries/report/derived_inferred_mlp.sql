-- report/derived_inferred_mlp: the inferred_mlp rows of a batch of runs (the runs in chosen_runs).
SELECT *
FROM inferred_mlp
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY working_set_bytes
