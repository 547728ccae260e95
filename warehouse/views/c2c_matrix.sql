-- c2c_matrix: core-to-core latency, one row per ordered CPU pair: one-way ns (round trip / 2) of a
-- cache line bounced between the two, with SMT-sibling, same-core and NUMA markings.
CREATE OR REPLACE VIEW c2c_matrix AS
SELECT
    run_id,
    host,
    TRY_CAST(params ->> '$.cpu_a' AS INTEGER)                 AS cpu_a,
    TRY_CAST(params ->> '$.cpu_b' AS INTEGER)                 AS cpu_b,
    TRY_CAST(params ->> '$.smt_siblings' AS BOOLEAN)          AS smt_siblings,
    TRY_CAST(params ->> '$.same_core' AS BOOLEAN)             AS same_core,
    TRY_CAST(params ->> '$.same_package' AS BOOLEAN)          AS same_package,
    TRY_CAST(params ->> '$.numa_node_a' AS INTEGER)           AS numa_node_a,
    TRY_CAST(params ->> '$.numa_node_b' AS INTEGER)           AS numa_node_b,
    summary_median                                            AS median_ns,
    summary_mean                                              AS mean_ns,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_ns,
    summary_min                                               AS min_ns,
    summary_ci95_low                                          AS ci95_low_ns,
    summary_ci95_high                                         AS ci95_high_ns
FROM points
WHERE experiment = 'c2c' AND metric = 'latency' AND unit = 'ns';
