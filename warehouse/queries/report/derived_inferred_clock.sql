-- report/derived_inferred_clock: the inferred_clock rows (the turbo curve of each instruction class) of a batch
-- of runs (the runs in chosen_runs), narrowest class first.
SELECT *
FROM inferred_clock
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY vector_bits, class
