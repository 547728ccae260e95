-- write_cost_flush: the clflush+mfence variant of write_cost. It times a FLUSH ROUND TRIP (store,
-- clflush, mfence, reload: a write-back to memory and a read back), not store latency. cpu: the CPU it
-- was pinned to (its core kind: view cpu_core_kinds).
CREATE OR REPLACE VIEW write_cost_flush AS
SELECT
    run_id,
    host,
    params ->> '$.variant'                                    AS variant,
    summary_median                                            AS median_ns,
    summary_mean                                              AS mean_ns,
    (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
        AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS std_ns,
    summary_min                                               AS min_ns,
    summary_ci95_low                                          AS ci95_low_ns,
    summary_ci95_high                                         AS ci95_high_ns,
    TRY_CAST(context ->> '$.median_cycles' AS DOUBLE)         AS median_cycles,
    params ->> '$.note'                                       AS note,
    TRY_CAST(params ->> '$.cpu' AS INTEGER)                   AS cpu
FROM points
WHERE experiment = 'write_cost' AND metric = 'flush_round_trip';
