-- report/knob_values: every knob's before / applied / after value of a batch of runs (their run_ids, their
-- hosts).
SELECT *
FROM knob_values
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY knob
