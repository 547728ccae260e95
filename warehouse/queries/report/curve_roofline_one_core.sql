-- report/curve_roofline_one_core: the one core roofline a comparison overlays (view roofline_curve), of the runs in
-- chosen_runs (columns as report/curve_latency).
SELECT run_id, host, point, x, y
FROM roofline_curve
WHERE (run_id, host) IN (FROM chosen_runs) AND scope = 'one core'
ORDER BY run_id, host, x
