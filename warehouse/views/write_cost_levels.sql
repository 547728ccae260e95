-- write_cost_levels: per level, the read-only chase beside the read-modify-write chase; rmw_extra_ns is
-- what the store adds (read-for-ownership and write-back of dirty lines). One row per level and pinned CPU.
CREATE OR REPLACE VIEW write_cost_levels AS
WITH walks AS (
    SELECT
        run_id,
        host,
        params ->> '$.level'                                  AS level,
        TRY_CAST(params ->> '$.sysfs_size_bytes' AS BIGINT)   AS sysfs_size_bytes,
        TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)  AS working_set_bytes,
        params ->> '$.walk'                                   AS walk,
        TRY_CAST(params ->> '$.cpu' AS INTEGER)               AS cpu,
        summary_median
    FROM points
    WHERE experiment = 'write_cost' AND metric = 'latency' AND unit = 'ns'
)
SELECT
    run_id,
    host,
    level,
    any_value(sysfs_size_bytes)                                          AS sysfs_size_bytes,
    any_value(working_set_bytes)                                         AS working_set_bytes,
    max(summary_median) FILTER (WHERE walk = 'read')                     AS read_ns,
    max(summary_median) FILTER (WHERE walk = 'read_modify_write')        AS rmw_ns,
    rmw_ns - read_ns                                                     AS rmw_extra_ns,
    rmw_ns / read_ns                                                     AS rmw_ratio,
    cpu
FROM walks
GROUP BY run_id, host, level, cpu;
