-- numa_bandwidth_matrix: read bandwidth per (CPU node, memory node), one row per pair the numa_matrix
-- experiment measured (threads on the CPU node's CPUs, each reading a buffer of its own, every page bound to
-- mem_node with set_mempolicy MPOL_BIND and checked there with move_pages), with the ratio to the same CPU
-- node's local bandwidth.
CREATE OR REPLACE VIEW numa_bandwidth_matrix AS
WITH cells AS (
    SELECT
        run_id,
        host,
        point_index,
        TRY_CAST(params ->> '$.cpu_node' AS INTEGER)             AS cpu_node,
        TRY_CAST(params ->> '$.mem_node' AS INTEGER)             AS mem_node,
        TRY_CAST(params ->> '$.threads' AS INTEGER)              AS threads,
        TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)     AS bytes_per_thread,
        TRY_CAST(context ->> '$.mem_pages_sampled' AS BIGINT)    AS pages_sampled,
        TRY_CAST(context ->> '$.mem_pages_on_node' AS BIGINT)    AS pages_on_node,
        summary_median                                           AS median_gb_s,
        summary_mean                                             AS mean_gb_s,
        (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
            AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_gb_s,
        summary_ci95_low                                         AS ci95_low_gb_s,
        summary_ci95_high                                        AS ci95_high_gb_s
    FROM points
    WHERE experiment = 'numa_matrix' AND metric = 'bandwidth' AND unit = 'GB/s'
),
-- one local bandwidth per CPU node to divide by: a host repeating a cell must not multiply the rows
local AS (
    SELECT run_id, host, cpu_node, median(median_gb_s) AS median_gb_s
    FROM cells
    WHERE mem_node = cpu_node
    GROUP BY ALL
)
SELECT
    c.*,
    c.median_gb_s / nullif(l.median_gb_s, 0)                       AS ratio_to_local
FROM cells AS c
LEFT JOIN local AS l
  ON l.run_id = c.run_id AND l.host = c.host AND l.cpu_node = c.cpu_node;
