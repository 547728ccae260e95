-- report/curve_roofline_all_cores: the all cores roofline a comparison overlays (view roofline_curve), of the runs in
-- chosen_runs (columns as report/curve_latency).
SELECT run_id, host, point, x, y
FROM roofline_curve
WHERE (run_id, host) IN (FROM chosen_runs) AND scope = 'all cores'
ORDER BY run_id, host, x
