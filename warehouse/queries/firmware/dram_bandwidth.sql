-- The DRAM-sized bandwidths the run measured (GB/s), largest first (no LIMIT: derive asks it for a batch of runs
-- at once), and what measured each: the bandwidth kernels' points from
-- the given working set up (thread sweep, bandwidth ...). Parameters: run_id, host, DRAM-sized bytes.
SELECT median_gb_s,
       experiment || ': ' || op || ', ' || threads || CASE WHEN threads = 1 THEN ' thread' ELSE ' threads' END
FROM bandwidth_points
WHERE run_id = ? AND host = ? AND working_set_bytes >= ? AND median_gb_s IS NOT NULL
ORDER BY median_gb_s DESC
