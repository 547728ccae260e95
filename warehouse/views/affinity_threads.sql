-- affinity_threads: CPU affinity, one row per thread of every run (placement x workload x repeat): the
-- thread's throughput over its windows, and what the thread itself saw of the scheduler: CPU changes
-- between its sched_getcpu() checks (migrations observed, a lower bound) and its own context switches
-- (getrusage RUSAGE_THREAD) inside the measured windows.
CREATE OR REPLACE VIEW affinity_threads AS
SELECT
    run_id,
    host,
    params ->> '$.placement'                                          AS placement,
    params ->> '$.workload'                                           AS workload,
    TRY_CAST(params ->> '$.threads' AS INTEGER)                       AS threads,
    TRY_CAST(params ->> '$.thread' AS INTEGER)                        AS thread,
    TRY_CAST(params ->> '$.cpu' AS INTEGER)                           AS cpu,
    TRY_CAST(params ->> '$.repeat' AS INTEGER)                        AS repeat,
    unit,
    summary_median                                                    AS median_throughput,
    summary_min                                                       AS min_throughput,
    summary_ci95_low                                                  AS ci95_low,
    summary_ci95_high                                                 AS ci95_high,
    summary_count                                                     AS sample_count,
    TRY_CAST(context ->> '$.migrations_observed' AS BIGINT)           AS migrations_observed,
    TRY_CAST(context ->> '$.cpu_checks' AS BIGINT)                    AS cpu_checks,
    context ->> '$.cpus_seen'                                         AS cpus_seen,
    TRY_CAST(context ->> '$.voluntary_context_switches' AS BIGINT)    AS voluntary_context_switches,
    TRY_CAST(context ->> '$.involuntary_context_switches' AS BIGINT)  AS involuntary_context_switches
FROM points
WHERE experiment = 'affinity' AND metric = 'throughput';
