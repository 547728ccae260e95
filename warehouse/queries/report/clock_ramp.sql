-- report/clock_ramp: each ramp of core_clock (the clock in slices after an idle sleep), of a batch of runs (the
-- runs in chosen_runs).
SELECT *
FROM clock_ramp
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY repeat
