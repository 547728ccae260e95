-- report/derived_inferred_mlp: the inferred_mlp rows of a batch of runs (their run_ids, their hosts).
SELECT *
FROM inferred_mlp
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY working_set_bytes
