-- bandwidth_points: one row per point of the bandwidth kernel, whatever experiment ran it (bandwidth,
-- stride_bandwidth, rw_mix, thread_sweep, prefetch, prefetch_hw_off). GB/s = 1e9 B/s counted in 64-byte
-- lines moved by the program (lines_per_pass x 64 = bytes_per_pass, per thread); write-allocate reads
-- of regular stores are not counted (write_allocate_bytes_per_pass says how many there were).
CREATE OR REPLACE VIEW bandwidth_points AS
SELECT
    run_id,
    host,
    experiment,
    point_index,
    params ->> '$.op'                                               AS op,
    params ->> '$.store'                                            AS store,
    params ->> '$.pattern'                                          AS pattern,
    TRY_CAST(params ->> '$.stride_bytes' AS BIGINT)                 AS stride_bytes,
    TRY_CAST(params ->> '$.read_lines' AS INTEGER)                  AS read_lines,
    TRY_CAST(params ->> '$.write_lines' AS INTEGER)                 AS write_lines,
    TRY_CAST(params ->> '$.read_percent' AS DOUBLE)                 AS read_percent,
    params ->> '$.isa'                                              AS isa,
    params ->> '$.prefetch'                                         AS prefetch,
    TRY_CAST(params ->> '$.prefetch_distance_blocks' AS INTEGER)    AS prefetch_distance_blocks,
    params ->> '$.hw_prefetchers'                                   AS hw_prefetchers,
    TRY_CAST(params ->> '$.threads' AS INTEGER)                     AS threads,
    params ->> '$.cpus'                                             AS cpus,
    TRY_CAST(params ->> '$.smt_siblings_used' AS BOOLEAN)           AS smt_siblings_used,
    TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)            AS working_set_bytes,
    TRY_CAST(params ->> '$.lines_per_pass' AS BIGINT)               AS lines_per_pass,
    TRY_CAST(params ->> '$.bytes_per_pass' AS BIGINT)               AS bytes_per_pass,
    TRY_CAST(context ->> '$.write_allocate_bytes_per_pass' AS BIGINT) AS write_allocate_bytes_per_pass,
    params ->> '$.page_policy'                                      AS page_policy,
    TRY_CAST(params ->> '$.huge_bytes_granted' AS BIGINT)           AS huge_bytes_granted,
    summary_median                                                  AS median_gb_s,
    summary_mean                                                    AS mean_gb_s,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_gb_s,
    summary_min                                                     AS min_gb_s,
    summary_ci95_low                                                AS ci95_low_gb_s,
    summary_ci95_high                                               AS ci95_high_gb_s,
    summary_count                                                   AS samples,
    TRY_CAST(params ->> '$.cpu' AS INTEGER)                             AS cpu
FROM points
WHERE kernel = 'bandwidth' AND metric = 'bandwidth' AND unit = 'GB/s';
