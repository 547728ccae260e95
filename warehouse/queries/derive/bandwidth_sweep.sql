-- The single-thread working-set sweep of the bandwidth experiment. Parameters: run_id, host.
SELECT op, store, working_set_bytes, median_gb_s
FROM bandwidth_points
WHERE run_id = ? AND host = ? AND experiment = 'bandwidth' AND threads = 1
