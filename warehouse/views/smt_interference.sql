-- smt_interference: SMT interference, one row per workload (compute, memory) and placement: one CPU
-- alone, two SMT siblings of one core, two CPUs of different cores. Throughput per thread and in
-- total (the median over repeats of each run's sum of thread medians) and the speedup over the CPU
-- alone. core_kind: the kind(s) of the placement's CPUs (view point_core_kinds; 'P-core + E-core' for
-- two cores of different kinds), NULL where the facts hold no topology. A host without SMT siblings has
-- no rows: the experiment is skipped with the reason in experiments.notes.
CREATE OR REPLACE VIEW smt_interference AS
WITH per_repeat AS (
    SELECT
        p.run_id,
        p.host,
        params ->> '$.workload'                                       AS workload,
        params ->> '$.placement'                                      AS placement,
        params ->> '$.cpus'                                           AS cpus,
        unit,
        TRY_CAST(params ->> '$.repeat' AS INTEGER)                    AS repeat,
        any_value(k.core_kind)                                        AS core_kind,
        count(*)                                                      AS threads,
        sum(summary_median)                                           AS total,
        avg(summary_median)                                           AS per_thread
    FROM points AS p
    LEFT JOIN point_core_kinds AS k
      ON k.run_id = p.run_id AND k.host = p.host AND k.experiment = p.experiment AND k.point_index = p.point_index
    WHERE p.experiment = 'smt' AND p.metric = 'throughput'
    GROUP BY p.run_id, p.host, workload, placement, cpus, unit, repeat
),
per_placement AS (
    SELECT
        run_id,
        host,
        workload,
        placement,
        any_value(cpus)                                               AS cpus,
        any_value(core_kind)                                          AS core_kind,
        unit,
        max(threads)                                                  AS threads,
        count(*)                                                      AS repeats,
        median(per_thread)                                            AS per_thread_throughput,
        median(total)                                                 AS total_throughput,
        stddev_samp(total) / avg(total)                               AS repeat_spread_cv
    FROM per_repeat
    GROUP BY ALL
)
SELECT
    p.*,
    p.total_throughput / alone.total_throughput                       AS speedup,
    p.per_thread_throughput / alone.total_throughput                  AS per_thread_vs_alone
FROM per_placement AS p
LEFT JOIN per_placement AS alone
  ON alone.run_id = p.run_id AND alone.host = p.host AND alone.workload = p.workload
 AND alone.placement = 'alone';
