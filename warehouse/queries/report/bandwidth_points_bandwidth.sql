-- report/bandwidth_points_bandwidth: the bandwidth sweep's points (experiment bandwidth), of a batch of
-- runs (the runs in chosen_runs).
SELECT *
FROM bandwidth_points
WHERE (run_id, host) IN (FROM chosen_runs) AND experiment = 'bandwidth'
ORDER BY op, store, working_set_bytes
