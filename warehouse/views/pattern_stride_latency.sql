-- pattern_stride_latency: DRAM latency per access pattern and stride, one row per point. Every stride
-- touches footprint_bytes of lines; footprint_capped is true where the memory cap cut the span (then
-- the footprint is smaller and may partly fit in cache). threads: 1, or the measuring thread plus the companions
-- chasing alongside it (kernels_pattern_stride_threads): a loaded latency, not the idle one.
CREATE OR REPLACE VIEW pattern_stride_latency AS
SELECT
    run_id,
    host,
    params ->> '$.pattern'                                    AS pattern,
    TRY_CAST(params ->> '$.stride_bytes' AS BIGINT)           AS stride_bytes,
    TRY_CAST(params ->> '$.footprint_bytes' AS BIGINT)        AS footprint_bytes,
    TRY_CAST(params ->> '$.footprint_capped' AS BOOLEAN)      AS footprint_capped,
    TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)      AS span_bytes,
    params ->> '$.page_policy'                                AS page_policy,
    summary_median                                            AS median_ns,
    summary_mean                                              AS mean_ns,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_ns,
    summary_min                                               AS min_ns,
    summary_ci95_low                                          AS ci95_low_ns,
    summary_ci95_high                                         AS ci95_high_ns,
    TRY_CAST(context ->> '$.median_cycles' AS DOUBLE)         AS median_cycles,
    coalesce(TRY_CAST(params ->> '$.threads' AS INTEGER), 1)  AS threads
FROM points
WHERE experiment = 'pattern_stride' AND metric = 'latency' AND unit = 'ns';
