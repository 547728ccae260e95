-- report/bandwidth_points_bandwidth: the bandwidth sweep's points (experiment bandwidth), of a batch of
-- runs (their run_ids, their hosts).
SELECT *
FROM bandwidth_points
WHERE list_contains(?, run_id) AND list_contains(?, host) AND experiment = 'bandwidth'
ORDER BY op, store, working_set_bytes
