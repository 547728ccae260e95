-- report/derived_inferred_clock_ramp: the inferred_clock_ramp row (the ramp from idle to the top clock) of a
-- batch of runs (the runs in chosen_runs).
SELECT *
FROM inferred_clock_ramp
WHERE (run_id, host) IN (FROM chosen_runs)
