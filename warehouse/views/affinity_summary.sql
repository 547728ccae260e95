-- affinity_summary: CPU affinity, one row per placement (unpinned, pinned) and workload (compute,
-- memory): throughput per thread and in total, its spread across threads (within a run) and across
-- repeats (fresh runs), and the scheduler's activity: what the threads observed themselves, and what
-- perf stat counted for the whole process (NULL where the host's perf could not count). threads_by_core_kind:
-- how many of a run's threads ran on each core kind ('6 on P-core, 8 on E-core'; a mean over repeats where
-- the scheduler placed them, 'P-core + E-core' for threads it moved across kinds), fastest kind first; NULL
-- where the facts hold no topology.
CREATE OR REPLACE VIEW affinity_summary AS
WITH per_repeat AS (
    SELECT
        run_id,
        host,
        placement,
        workload,
        unit,
        repeat,
        max(threads)                                                  AS threads,
        sum(median_throughput)                                        AS total,
        avg(median_throughput)                                        AS per_thread,
        stddev_samp(median_throughput) / avg(median_throughput)       AS thread_cv,
        min(median_throughput) / max(median_throughput)               AS slowest_to_fastest,
        sum(migrations_observed)                                      AS migrations,
        sum(voluntary_context_switches)                               AS voluntary,
        sum(involuntary_context_switches)                             AS involuntary
    FROM affinity_threads
    GROUP BY ALL
),
kind_threads AS (
    SELECT run_id, host, placement, workload, core_kind, min(core_kind_rank) AS kind_rank, count(*) AS thread_runs
    FROM affinity_threads
    WHERE core_kind IS NOT NULL
    GROUP BY ALL
),
kinds AS (
    SELECT
        t.run_id,
        t.host,
        t.placement,
        t.workload,
        string_agg(CASE WHEN t.thread_runs % r.repeats = 0 THEN CAST(t.thread_runs // r.repeats AS VARCHAR)
                        ELSE format('{:.1f}', t.thread_runs / r.repeats) END || ' on ' || t.core_kind,
                   ', ' ORDER BY t.kind_rank, t.core_kind)          AS threads_by_core_kind
    FROM kind_threads AS t
    JOIN (SELECT run_id, host, placement, workload, count(DISTINCT repeat) AS repeats
          FROM affinity_threads GROUP BY ALL) AS r
      USING (run_id, host, placement, workload)
    GROUP BY ALL
),
perf AS (
    -- the kernels role runs one process per placement and workload, labelled
    -- "placements <p>, workloads <w>"
    SELECT
        run_id,
        host,
        regexp_extract(point, 'placements (\w+)', 1)                  AS placement,
        regexp_extract(point, 'workloads (\w+)', 1)                   AS workload,
        max(value) FILTER (WHERE name = 'cpu-migrations' AND state = 'counted')   AS perf_cpu_migrations,
        max(value) FILTER (WHERE name = 'context-switches' AND state = 'counted') AS perf_context_switches
    FROM perf_counters
    WHERE experiment = 'affinity'
    GROUP BY ALL
)
SELECT
    r.run_id,
    r.host,
    r.placement,
    r.workload,
    r.unit,
    max(r.threads)                                                    AS threads,
    count(*)                                                          AS repeats,
    median(r.per_thread)                                              AS per_thread_throughput,
    median(r.total)                                                   AS total_throughput,
    median(r.thread_cv)                                               AS thread_spread_cv,
    min(r.slowest_to_fastest)                                         AS slowest_to_fastest_thread,
    stddev_samp(r.total) / avg(r.total)                               AS repeat_spread_cv,
    sum(r.migrations)                                                 AS migrations_observed,
    sum(r.voluntary)                                                  AS voluntary_context_switches,
    sum(r.involuntary)                                                AS involuntary_context_switches,
    any_value(p.perf_cpu_migrations)                                  AS perf_cpu_migrations,
    any_value(p.perf_context_switches)                                AS perf_context_switches,
    any_value(k.threads_by_core_kind)                                 AS threads_by_core_kind
FROM per_repeat AS r
LEFT JOIN perf AS p
  ON p.run_id = r.run_id AND p.host = r.host AND p.placement = r.placement AND p.workload = r.workload
LEFT JOIN kinds AS k
  ON k.run_id = r.run_id AND k.host = r.host AND k.placement = r.placement AND k.workload = r.workload
GROUP BY r.run_id, r.host, r.placement, r.workload, r.unit;
