-- The largest DRAM-sized bandwidth the run measured (GB/s) and what measured it: the bandwidth kernels' points from
-- the given working set up (thread sweep, bandwidth ...). Parameters: run_id, host, DRAM-sized bytes.
SELECT median_gb_s,
       experiment || ': ' || op || ', ' || threads || CASE WHEN threads = 1 THEN ' thread' ELSE ' threads' END
FROM bandwidth_points
WHERE run_id = ? AND host = ? AND working_set_bytes >= ? AND median_gb_s IS NOT NULL
ORDER BY median_gb_s DESC
LIMIT 1
