-- report/curve_storage: the 99th percentile latency (ns) of random reads per queue depth (fio's randread
-- job, DiskSpd's random reads), of the runs in chosen_runs (columns as report/curve_latency).
SELECT run_id, host, queue_depth AS point, queue_depth AS x, min(latency_ns) AS y
FROM storage_percentiles
WHERE (run_id, host) IN (FROM chosen_runs) AND rw = 'randread' AND direction = 'read' AND percentile = 99
  AND queue_depth > 0 AND latency_ns > 0
GROUP BY run_id, host, queue_depth
ORDER BY run_id, host, x
