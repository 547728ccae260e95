-- Experiments of one run with a price: planned bound and wall time (view plan_vs_actual).
-- Parameters: run_id, host.
SELECT experiment, planned_s, actual_s
FROM plan_vs_actual
WHERE run_id = ? AND host = ? AND planned_s > 0 AND actual_s IS NOT NULL
ORDER BY experiment
