-- The loaded_latency kernel's loaded points (load threads asked for) with the bandwidth their load threads moved
-- during the chase samples (context.bandwidth_gb_s; absent reads 0), as traffic, delay, load threads, GB/s.
-- Parameters: run_id, host.
SELECT params ->> '$.traffic' AS traffic, TRY_CAST(params ->> '$.delay' AS BIGINT) AS delay,
       TRY_CAST(params ->> '$.load_threads' AS INTEGER) AS load_threads,
       coalesce(TRY_CAST(context ->> '$.bandwidth_gb_s' AS DOUBLE), 0) AS bandwidth_gb_s
FROM points
WHERE run_id = ? AND host = ? AND kernel = 'loaded_latency' AND metric = 'loaded_latency' AND unit = 'ns'
  AND coalesce(TRY_CAST(params ->> '$.load_threads' AS INTEGER), 0) > 0
ORDER BY traffic, delay
