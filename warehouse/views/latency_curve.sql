-- latency_curve: the pointer-chase latency sweep, one row per measured working-set size.
-- cpu: the CPU the chase was pinned to (its core kind: view cpu_core_kinds).
-- Points whose working_set_bytes is missing or not a positive integer are left out.
CREATE OR REPLACE VIEW latency_curve AS
SELECT
    run_id,
    host,
    point_index,
    kernel,
    params ->> '$.page_policy'                                AS page_policy,
    params ->> '$.pattern'                                    AS pattern,
    TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)      AS working_set_bytes,
    TRY_CAST(params ->> '$.huge_bytes_granted' AS BIGINT)     AS huge_bytes_granted,
    summary_median                                            AS median_ns,
    summary_mean                                              AS mean_ns,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_ns,
    summary_min                                               AS min_ns,
    summary_ci95_low                                          AS ci95_low_ns,
    summary_ci95_high                                         AS ci95_high_ns,
    summary_count                                             AS sample_count,
    TRY_CAST(context ->> '$.median_cycles' AS DOUBLE)         AS median_cycles,
    TRY_CAST(params ->> '$.cpu' AS INTEGER)                   AS cpu
FROM points
WHERE experiment = 'latency_sweep'
  AND metric = 'latency'
  AND unit = 'ns'
  AND TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT) > 0;
