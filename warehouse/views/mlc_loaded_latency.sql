-- mlc_loaded_latency: Intel MLC's loaded-latency curve (--loaded_latency), one row per injected
-- delay of each run: the bandwidth the load threads drew and the latency the latency thread saw
-- under it. Read the curve from the largest delay (idle) to delay 0 (full load).
CREATE OR REPLACE VIEW mlc_loaded_latency AS
SELECT
    s.run_id,
    s.host,
    s.experiment,
    s.path,
    TRY_CAST(s.params ->> '$.run' AS INTEGER)                                  AS run_index,
    s.params ->> '$.traffic'                                                   AS traffic,
    TRY_CAST(s.params ->> '$.buffer_bytes' AS BIGINT)                          AS buffer_bytes,
    TRY_CAST(s.params ->> '$.delay_cycles' AS INTEGER)                         AS delay_cycles,
    max(s.value) FILTER (WHERE s.metric = 'bandwidth' AND s.unit = 'MB/s')     AS bandwidth_mb_s,
    max(s.value) FILTER (WHERE s.metric = 'latency' AND s.unit = 'ns')         AS latency_ns,
    -- Little's law: lines in flight = bandwidth / 64 B x latency
    max(s.value) FILTER (WHERE s.metric = 'bandwidth' AND s.unit = 'MB/s')
      * max(s.value) FILTER (WHERE s.metric = 'latency' AND s.unit = 'ns') / 64000.0 AS outstanding_lines,
    TRY_CAST(json_extract(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].truncated') AS BOOLEAN) AS run_truncated,
    json_extract_string(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].version')      AS mlc_version,
    json_extract_string(r.parsed, '$.runs[' || (s.params ->> '$.run') || '].command_line') AS mlc_parameters
FROM tool_samples AS s
JOIN raw_outputs AS r USING (run_id, host, path)
WHERE s.tool = 'mlc' AND (s.params ->> '$.mode') = 'loaded_latency'
GROUP BY ALL
ORDER BY s.run_id, s.host, s.path, run_index, delay_cycles DESC;
