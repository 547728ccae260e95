-- report/knob_values: every knob's before / applied / after value of a batch of runs (the runs in
-- chosen_runs).
SELECT *
FROM knob_values
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY knob
