-- report/bandwidth_points_rw_mix: bandwidth per read/write mix (experiment rw_mix), of a batch of runs
-- (the runs in chosen_runs).
SELECT *
FROM bandwidth_points
WHERE (run_id, host) IN (FROM chosen_runs) AND experiment = 'rw_mix'
ORDER BY read_percent DESC, store
