-- The threads of every multi-thread placement of the affinity and smt kernels, one row per thread: the CPU
-- it was placed on (NULL: unpinned), the CPUs it saw itself on (sched_getcpu), and its own CPU time over the
-- measured windows beside their wall time (context.thread_cpu_s, .windows_s; NULL before kernels recorded
-- them). Parameters: run_id, host.
SELECT
    experiment,
    params ->> '$.placement'                                  AS placement,
    params ->> '$.workload'                                   AS workload,
    TRY_CAST(params ->> '$.repeat' AS INTEGER)                AS repeat,
    TRY_CAST(params ->> '$.threads' AS INTEGER)               AS threads,
    TRY_CAST(params ->> '$.thread' AS INTEGER)                AS thread,
    TRY_CAST(params ->> '$.cpu' AS INTEGER)                   AS cpu,
    TRY_CAST(context -> '$.cpus_seen' AS INTEGER[])           AS cpus_seen,
    TRY_CAST(context ->> '$.thread_cpu_s' AS DOUBLE)          AS thread_cpu_s,
    TRY_CAST(context ->> '$.windows_s' AS DOUBLE)             AS windows_s
FROM points
WHERE run_id = ? AND host = ?
  AND experiment IN ('affinity', 'smt') AND metric = 'throughput'
  AND TRY_CAST(params ->> '$.threads' AS INTEGER) >= 2
ORDER BY experiment, placement, workload, repeat, thread
