-- loaded_latency_curve: the loaded_latency kernel's throughput-latency curve, one row per traffic and
-- injected delay (and the idle point, traffic 'idle', no load threads): the load threads' bandwidth
-- during the chase samples, the chase latency (median and minimum ns per dependent load) and the
-- lines in flight by Little's law, bandwidth / 64 B x latency.
CREATE OR REPLACE VIEW loaded_latency_curve AS
SELECT
    run_id,
    host,
    params ->> '$.traffic'                                          AS traffic,
    TRY_CAST(params ->> '$.read_lines' AS INTEGER)                  AS read_lines,
    TRY_CAST(params ->> '$.write_lines' AS INTEGER)                 AS write_lines,
    params ->> '$.store'                                            AS store,
    TRY_CAST(params ->> '$.delay' AS BIGINT)                        AS delay,
    TRY_CAST(params ->> '$.load_threads' AS INTEGER)                AS load_threads,
    TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)            AS working_set_bytes,
    coalesce(TRY_CAST(context ->> '$.bandwidth_gb_s' AS DOUBLE), 0) AS bandwidth_gb_s,
    summary_median                                                  AS latency_ns,
    summary_mean                                                    AS mean_latency_ns,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_latency_ns,
    summary_min                                                     AS latency_min_ns,
    coalesce(TRY_CAST(context ->> '$.bandwidth_gb_s' AS DOUBLE), 0) * summary_median / 64 AS outstanding_lines
FROM points
WHERE kernel = 'loaded_latency' AND metric = 'loaded_latency' AND unit = 'ns';
