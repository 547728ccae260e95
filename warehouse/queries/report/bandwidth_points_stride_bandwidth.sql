-- report/bandwidth_points_stride_bandwidth: read bandwidth per order and stride (experiment
-- stride_bandwidth), of a batch of runs (their run_ids, their hosts).
SELECT *
FROM bandwidth_points
WHERE list_contains(?, run_id) AND list_contains(?, host) AND experiment = 'stride_bandwidth'
ORDER BY pattern, stride_bytes
