-- report/derived_inferred_saxpy: the inferred_saxpy rows of a batch of runs (their run_ids, their hosts).
SELECT *
FROM inferred_saxpy
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY strides
