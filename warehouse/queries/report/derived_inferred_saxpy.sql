-- report/derived_inferred_saxpy: the inferred_saxpy rows of a batch of runs (the runs in chosen_runs).
SELECT *
FROM inferred_saxpy
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY strides
