-- saxpy_stride: SAXPY (y = a*x + y) at constant work, one row per stride: ns per update (median),
-- the slowdown against stride 1 of the same run, the line visits of one pass (lines of x and y each
-- offset sweep touches) and the effective bandwidth of those visits. On a host with more than one core
-- kind each pinned CPU (cpu) has its own rows and its own stride-1 baseline; so has each team size (threads,
-- kernels_saxpy_threads: ns per update of all threads together; cpu NULL, the team's CPUs in cpus).
CREATE OR REPLACE VIEW saxpy_stride AS
WITH per_stride AS (
    SELECT
        run_id,
        host,
        TRY_CAST(params ->> '$.stride_elements' AS INTEGER)         AS stride_elements,
        TRY_CAST(params ->> '$.array_bytes' AS BIGINT)              AS array_bytes,
        summary_median                                              AS ns_per_update,
        summary_mean                                                AS mean_ns_per_update,
        (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
            AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_ns_per_update,
        summary_min                                                 AS min_ns_per_update,
        TRY_CAST(context ->> '$.line_visits_per_pass' AS BIGINT)    AS line_visits_per_pass,
        TRY_CAST(context ->> '$.effective_gb_s' AS DOUBLE)          AS effective_gb_s,
        TRY_CAST(params ->> '$.cpu' AS INTEGER)                     AS cpu,
        coalesce(TRY_CAST(params ->> '$.threads' AS INTEGER), 1)    AS threads
    FROM points
    WHERE kernel = 'saxpy' AND metric = 'saxpy' AND unit = 'ns'
),
-- one stride-1 time per CPU and thread count to divide by: a host repeating a point must not multiply the rows
stride1 AS (
    SELECT run_id, host, cpu, threads, median(ns_per_update) AS ns_per_update
    FROM per_stride
    WHERE stride_elements = 1
    GROUP BY ALL
)
SELECT
    s.*,
    s.ns_per_update / one.ns_per_update                             AS slowdown_vs_stride1
FROM per_stride AS s
LEFT JOIN stride1 AS one
  ON one.run_id = s.run_id AND one.host = s.host AND one.cpu IS NOT DISTINCT FROM s.cpu AND one.threads = s.threads;
