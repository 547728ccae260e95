-- One imported workload's functions, time share beside miss share, most time first. Parameters: run_id, host,
-- workload.
SELECT symbol, kernel, time_share, time_share_below, time_rank, miss_share, miss_share_below, miss_rank,
       miss_per_time, ratio_bound, mark
FROM workload_functions
WHERE run_id = ? AND host = ? AND workload = ?
ORDER BY function_index
