-- mlc_bandwidth: Intel MLC's system bandwidth per read-write mix, one row per traffic type of each
-- run: --peak_injection_bandwidth (no delay injected) and --max_bandwidth (the best of several
-- injection rates). MB/s = 1e6 B/s, as MLC prints them.
CREATE OR REPLACE VIEW mlc_bandwidth AS
SELECT
    s.run_id,
    s.host,
    s.experiment,
    s.path,
    TRY_CAST(s.params ->> '$.run' AS INTEGER)                                  AS run_index,
    s.row_index,
    s.params ->> '$.mode'                                                      AS mode,
    s.params ->> '$.traffic'                                                   AS traffic,
    s.params ->> '$.label'                                                     AS traffic_label,
    TRY_CAST(s.params ->> '$.buffer_bytes' AS BIGINT)                          AS buffer_bytes,
    s.value                                                                    AS bandwidth_mb_s,
    TRY_CAST(json_extract(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].truncated') AS BOOLEAN) AS run_truncated,
    json_extract_string(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].version')      AS mlc_version,
    json_extract_string(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].command_line') AS mlc_parameters
FROM tool_samples AS s
JOIN raw_outputs AS r USING (run_id, host, path)
WHERE s.tool = 'mlc' AND (s.params ->> '$.mode') IN ('peak_injection_bandwidth', 'max_bandwidth')
  AND s.metric = 'bandwidth' AND s.unit = 'MB/s'
ORDER BY s.run_id, s.host, mode, s.path, run_index, s.row_index;
