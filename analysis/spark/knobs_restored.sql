-- Knobs a run changed and whether they came back.
SELECT run_id, host, knob, before_value, applied_value, after_value,
       before_value IS NOT DISTINCT FROM after_value AS restored
FROM knob_values WHERE available ORDER BY run_id, host, knob;
