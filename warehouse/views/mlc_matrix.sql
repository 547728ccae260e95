-- mlc_matrix: Intel MLC's node-to-node matrices and cache-to-cache transfers, one row per cell:
-- --latency_matrix (idle latency, ns) and --bandwidth_matrix (MB/s) from the CPUs of one NUMA node
-- to the memory of another, and --c2c_latency (ns): a line moved from one core's cache to
-- another's, within a socket or, in the remote matrices, from a writer node to a reader node.
CREATE OR REPLACE VIEW mlc_matrix AS
SELECT
    s.run_id,
    s.host,
    s.experiment,
    s.path,
    TRY_CAST(s.params ->> '$.run' AS INTEGER)                                  AS run_index,
    s.row_index,
    s.params ->> '$.mode'                                                      AS mode,
    TRY_CAST(s.params ->> '$.cpu_node' AS INTEGER)                             AS cpu_node,
    TRY_CAST(s.params ->> '$.memory_node' AS INTEGER)                          AS memory_node,
    s.params ->> '$.scope'                                                     AS scope,
    s.params ->> '$.path'                                                      AS transfer_path,
    s.params ->> '$.transfer'                                                  AS transfer,
    s.params ->> '$.homed_in'                                                  AS homed_in,
    TRY_CAST(s.params ->> '$.writer_node' AS INTEGER)                          AS writer_node,
    TRY_CAST(s.params ->> '$.reader_node' AS INTEGER)                          AS reader_node,
    CASE WHEN s.metric = 'latency' AND s.unit = 'ns' THEN s.value END          AS latency_ns,
    CASE WHEN s.metric = 'bandwidth' AND s.unit = 'MB/s' THEN s.value END      AS bandwidth_mb_s,
    s.params ->> '$.traffic'                                                   AS traffic,
    s.params ->> '$.access'                                                    AS access,
    TRY_CAST(s.params ->> '$.buffer_bytes' AS BIGINT)                          AS buffer_bytes,
    json_extract_string(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].version')      AS mlc_version
FROM tool_samples AS s
JOIN raw_outputs AS r USING (run_id, host, path)
WHERE s.tool = 'mlc' AND (s.params ->> '$.mode') IN ('latency_matrix', 'bandwidth_matrix', 'c2c_latency')
  AND s.metric IN ('latency', 'bandwidth')
ORDER BY s.run_id, s.host, mode, s.path, run_index, s.row_index;
