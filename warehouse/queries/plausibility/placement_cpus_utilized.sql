-- perf stat's task-clock for each affinity or smt process (one per placement and workload, labelled
-- "placements <p>, workloads <w>"): the CPUs the process used on average over its life, setup included.
-- Parameters: run_id, host.
SELECT
    experiment,
    regexp_extract(point, 'placements (\w+)', 1)              AS placement,
    regexp_extract(point, 'workloads (\w+)', 1)               AS workload,
    max(metric_value)                                         AS cpus_utilized
FROM perf_counters
WHERE run_id = ? AND host = ?
  AND experiment IN ('affinity', 'smt') AND name = 'task-clock' AND state = 'counted'
  AND metric_unit = 'CPUs utilized'
GROUP BY ALL
