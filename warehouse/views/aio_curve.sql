-- aio_curve: async vs blocking reads, one row per I/O engine (blocking pread threads, posix_aio,
-- io_uring) and queue depth: MB/s (1e6 B/s) per window with its summary, IOPS, and the latency of
-- every read from submission to completion (fio's `lat`) as percentiles in microseconds; whether the
-- reads were O_DIRECT and whether the file's page cache was dropped before the point (both measured).
CREATE OR REPLACE VIEW aio_curve AS
SELECT
    run_id,
    host,
    params ->> '$.engine'                                             AS engine,
    params ->> '$.engine_detail'                                      AS engine_detail,
    TRY_CAST(params ->> '$.queue_depth' AS INTEGER)                   AS queue_depth,
    TRY_CAST(params ->> '$.threads' AS INTEGER)                       AS threads,
    TRY_CAST(params ->> '$.block_size_bytes' AS BIGINT)               AS block_size_bytes,
    params ->> '$.pattern'                                            AS pattern,
    TRY_CAST(params ->> '$.file_bytes' AS BIGINT)                     AS file_bytes,
    params ->> '$.filesystem'                                         AS filesystem,
    TRY_CAST(params ->> '$.direct' AS BOOLEAN)                        AS direct,
    params ->> '$.direct_note'                                        AS direct_note,
    TRY_CAST(params ->> '$.cache_dropped' AS BOOLEAN)                 AS cache_dropped,
    TRY_CAST(params ->> '$.cache_resident_bytes_after_drop' AS BIGINT) AS cache_resident_bytes_after_drop,
    summary_median                                                    AS median_mb_s,
    summary_min                                                       AS min_mb_s,
    summary_mean                                                      AS mean_mb_s,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_mb_s,
    summary_ci95_low                                                  AS ci95_low_mb_s,
    summary_ci95_high                                                 AS ci95_high_mb_s,
    summary_count                                                     AS sample_count,
    TRY_CAST(context ->> '$.iops' AS DOUBLE)                          AS iops,
    TRY_CAST(context ->> '$.ios' AS BIGINT)                           AS ios,
    TRY_CAST(context ->> '$.latency_mean_us' AS DOUBLE)               AS latency_mean_us,
    TRY_CAST(context ->> '$.latency_p50_us' AS DOUBLE)                AS p50_us,
    TRY_CAST(context ->> '$.latency_p90_us' AS DOUBLE)                AS p90_us,
    TRY_CAST(context ->> '$.latency_p99_us' AS DOUBLE)                AS p99_us,
    TRY_CAST(context ->> '$.latency_p99_9_us' AS DOUBLE)              AS p99_9_us,
    TRY_CAST(context ->> '$.latency_p99_99_us' AS DOUBLE)             AS p99_99_us,
    TRY_CAST(context ->> '$.latency_max_us' AS DOUBLE)                AS max_us,
    TRY_CAST(context ->> '$.voluntary_context_switches' AS BIGINT)    AS voluntary_context_switches,
    TRY_CAST(context ->> '$.involuntary_context_switches' AS BIGINT)  AS involuntary_context_switches
FROM points
WHERE experiment = 'aio' AND metric = 'throughput' AND unit = 'MB/s';
