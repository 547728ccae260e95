-- The loaded_latency kernel's points with their CI95: each loaded point and the idle point (no load threads;
-- load_threads 0), as traffic, delay, load threads, median, CI95 low and high ns. Parameters: run_id, host.
SELECT params ->> '$.traffic' AS traffic, TRY_CAST(params ->> '$.delay' AS BIGINT) AS delay,
       coalesce(TRY_CAST(params ->> '$.load_threads' AS INTEGER), 0),
       summary_median, summary_ci95_low, summary_ci95_high
FROM points
WHERE run_id = ? AND host = ? AND kernel = 'loaded_latency' AND metric = 'loaded_latency' AND unit = 'ns'
  AND summary_median IS NOT NULL
ORDER BY traffic, delay
