-- report/loaded_latency_curve: the loaded-latency ladder per traffic mix, idle point first, of a batch of
-- runs (the runs in chosen_runs).
SELECT *
FROM loaded_latency_curve
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY traffic, delay DESC NULLS FIRST
