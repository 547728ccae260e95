-- mlc_idle_latency: Intel MLC's idle latency (--idle_latency), one row per measurement. When the mlc
-- role ran it, `level` and the buffer rule come from the role (one run per cache level and DRAM);
-- MLC text loaded otherwise (`fleetscope import`) has one row per run it holds, with `level` NULL.
CREATE OR REPLACE VIEW mlc_idle_latency AS
SELECT
    s.run_id,
    s.host,
    s.experiment,
    s.path,
    TRY_CAST(s.params ->> '$.run' AS INTEGER)                                  AS run_index,
    s.params ->> '$.level'                                                     AS level,
    TRY_CAST(s.params ->> '$.buffer_bytes' AS BIGINT)                          AS buffer_bytes,
    TRY_CAST(r.params ->> '$.buffer_bytes' AS BIGINT)                          AS requested_buffer_bytes,
    TRY_CAST(s.params ->> '$.sysfs_size_bytes' AS BIGINT)                      AS sysfs_size_bytes,
    s.params ->> '$.buffer_rule'                                               AS buffer_rule,
    s.params ->> '$.access'                                                    AS access,
    max(s.value) FILTER (WHERE s.metric = 'latency' AND s.unit = 'ns')         AS latency_ns,
    max(s.value) FILTER (WHERE s.metric = 'latency_clocks')                    AS clocks,
    s.params ->> '$.clock'                                                     AS clock,
    json_extract_string(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].version')      AS mlc_version,
    json_extract_string(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].command_line') AS mlc_parameters
FROM tool_samples AS s
JOIN raw_outputs AS r USING (run_id, host, path)
WHERE s.tool = 'mlc' AND (s.params ->> '$.mode') = 'idle_latency'
GROUP BY ALL
ORDER BY s.run_id, s.host, buffer_bytes NULLS LAST, s.path, run_index;
