-- report/bandwidth_points_rw_mix: bandwidth per read/write mix (experiment rw_mix), of a batch of runs
-- (their run_ids, their hosts).
SELECT *
FROM bandwidth_points
WHERE list_contains(?, run_id) AND list_contains(?, host) AND experiment = 'rw_mix'
ORDER BY read_percent DESC, store
