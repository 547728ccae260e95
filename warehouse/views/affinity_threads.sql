-- affinity_threads: CPU affinity, one row per thread of every run (placement x workload x repeat): the
-- thread's throughput over its windows, and what the thread itself saw of the scheduler: CPU changes
-- between its sched_getcpu() checks (migrations observed, a lower bound) and its own context switches
-- (getrusage RUSAGE_THREAD) inside the measured windows. core_kind: the kind(s) of the CPUs the thread ran
-- on (view point_core_kinds; 'P-core + E-core' for a thread the scheduler moved across kinds), with
-- core_kind_rank its fastest kind's rank; NULL where the facts hold no topology.
CREATE OR REPLACE VIEW affinity_threads AS
SELECT
    p.run_id,
    p.host,
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
    TRY_CAST(context ->> '$.involuntary_context_switches' AS BIGINT)  AS involuntary_context_switches,
    k.core_kind,
    k.kind_rank                                                       AS core_kind_rank
FROM points AS p
LEFT JOIN point_core_kinds AS k
  ON k.run_id = p.run_id AND k.host = p.host AND k.experiment = p.experiment AND k.point_index = p.point_index
WHERE p.experiment = 'affinity' AND p.metric = 'throughput';
