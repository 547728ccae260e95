-- derive/clock_ramps: each ramp of core_clock of one run, its slices in time order (clock in GHz, the end of
-- each slice in µs after the ruler started and the share of it the thread ran), for
-- fleetscope.analyze.clock.infer_ramp. Parameters: run_id, host.
SELECT
    p.point_index,
    list(s.value ORDER BY s.sample_index)                                       AS ghz,
    any_value(TRY_CAST(p.context -> '$.slice_end_us' AS DOUBLE[]))              AS end_us,
    any_value(TRY_CAST(p.context -> '$.slice_cpu_shares' AS DOUBLE[]))          AS shares
FROM points AS p
JOIN samples AS s
  ON s.run_id = p.run_id AND s.host = p.host AND s.experiment = p.experiment AND s.point_index = p.point_index
WHERE p.run_id = ? AND p.host = ? AND p.experiment = 'core_clock' AND p.metric = 'clock_ramp'
GROUP BY p.point_index
ORDER BY p.point_index
