-- Each point's thermal-throttle verdict from its own counters (view point_counters: NULL where the host's
-- kernel has no thermal_throttle counters). Parameters: run_id, host.
SELECT DISTINCT experiment, point_index, kernel, throttled
FROM point_counters
WHERE run_id = ? AND host = ?
ORDER BY experiment, point_index
