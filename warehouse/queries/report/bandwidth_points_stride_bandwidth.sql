-- report/bandwidth_points_stride_bandwidth: read bandwidth per order and stride (experiment
-- stride_bandwidth), of a batch of runs (the runs in chosen_runs).
SELECT *
FROM bandwidth_points
WHERE (run_id, host) IN (FROM chosen_runs) AND experiment = 'stride_bandwidth'
ORDER BY pattern, stride_bytes
