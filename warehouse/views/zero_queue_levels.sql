-- zero_queue_levels: idle latency per cache level and DRAM, one row per level, with the sysfs size the
-- working set was chosen from (NULL for DRAM) and the rule that chose it.
CREATE OR REPLACE VIEW zero_queue_levels AS
SELECT
    run_id,
    host,
    params ->> '$.level'                                      AS level,
    TRY_CAST(params ->> '$.sysfs_size_bytes' AS BIGINT)       AS sysfs_size_bytes,
    TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)      AS working_set_bytes,
    params ->> '$.size_rule'                                  AS size_rule,
    params ->> '$.page_policy'                                AS page_policy,
    TRY_CAST(params ->> '$.huge_bytes_granted' AS BIGINT)     AS huge_bytes_granted,
    summary_median                                            AS median_ns,
    summary_mean                                              AS mean_ns,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_ns,
    summary_min                                               AS min_ns,
    summary_ci95_low                                          AS ci95_low_ns,
    summary_ci95_high                                         AS ci95_high_ns,
    TRY_CAST(context ->> '$.median_cycles' AS DOUBLE)         AS median_cycles,
    TRY_CAST(context ->> '$.core_clock_ghz' AS DOUBLE)        AS core_clock_ghz,
    TRY_CAST(params ->> '$.cpu' AS INTEGER)                   AS cpu
FROM points
WHERE experiment = 'zero_queue' AND metric = 'latency' AND unit = 'ns';
