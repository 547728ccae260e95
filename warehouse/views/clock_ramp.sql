-- clock_ramp: each ramp of core_clock, the scalar ruler run in short slices right after an idle sleep on the
-- first CPU: first_ghz (the first slice: the clock the core woke at), median_ghz and max_ghz over the slices,
-- slices and min_cpu_share (the least share of a slice the thread ran). The time to the top clock is
-- inferred from the slices (derived table inferred_clock_ramp); on a host whose clock does not move (a VM)
-- first and median are the same.
CREATE OR REPLACE VIEW clock_ramp AS
SELECT
    p.run_id,
    p.host,
    p.point_index,
    TRY_CAST(p.params ->> '$.repeat' AS INTEGER)                              AS repeat,
    TRY_CAST(p.params ->> '$.cpu' AS INTEGER)                                 AS cpu,
    TRY_CAST(p.params ->> '$.idle_ms' AS DOUBLE)                              AS idle_ms,
    TRY_CAST(p.params ->> '$.ramp_ms' AS DOUBLE)                              AS ramp_ms,
    TRY_CAST(p.params ->> '$.slice_us' AS DOUBLE)                             AS slice_us,
    p.summary_count                                                           AS slices,
    first.value                                                               AS first_ghz,
    p.summary_median                                                          AS median_ghz,
    (SELECT max(s.value) FROM samples AS s WHERE s.run_id = p.run_id AND s.host = p.host
        AND s.experiment = p.experiment AND s.point_index = p.point_index)    AS max_ghz,
    TRY_CAST(p.context ->> '$.min_cpu_share' AS DOUBLE)                       AS min_cpu_share
FROM points AS p
LEFT JOIN samples AS first
  ON first.run_id = p.run_id AND first.host = p.host AND first.experiment = p.experiment
 AND first.point_index = p.point_index AND first.sample_index = 0
WHERE p.experiment = 'core_clock' AND p.metric = 'clock_ramp' AND p.unit = 'GHz';
