-- workload_profile: the user's workloads (fleet_workloads), one row per workload and run: its wall
-- time and CPU time (the `workload` kernel's records), what perf stat counted (its raw CSV), the
-- rates derived from the counts, the counter tier they came from, and a classification with its
-- evidence:
--   miss-bound              IPC < 1 and cache misses >= 5 per 1k instructions, or L1d load misses
--                           >= 10% of loads, or dTLB load misses >= 1 per 1k instructions
--   front-end-bound         IPC < 1, not miss-bound, and iTLB misses >= 0.5 per 1k instructions or
--                           branch misses >= 5% of branches
--   store/dependency-bound  IPC < 1 with neither sign (stalls that are not misses or the front end:
--                           dependency chains, store forwarding)
--   unclassified: ...       counters unavailable (tier software or none, or the miss and front-end
--                           counters not supported), the workload failed, or IPC >= 1 (no stall
--                           signature)
-- A count the host could not make stays NULL and every rate built on it too: nothing is invented.
CREATE OR REPLACE VIEW workload_profile AS
WITH thresholds AS (
    SELECT 1.0 AS low_ipc, 5.0 AS cache_mpki, 0.10 AS l1d_miss_rate, 1.0 AS dtlb_mpki, 0.5 AS itlb_mpki,
           0.05 AS branch_miss_rate
),
timed AS (
    SELECT
        run_id,
        host,
        params ->> '$.workload'                                                   AS workload,
        summary_count                                                             AS runs,
        summary_median                                                            AS wall_median_s,
        summary_min                                                               AS wall_min_s,
        list_median(from_json(context -> '$.user_s', '["DOUBLE"]'))               AS user_median_s,
        list_median(from_json(context -> '$.sys_s', '["DOUBLE"]'))                AS sys_median_s,
        list_max(from_json(context -> '$.max_rss_bytes', '["UBIGINT"]'))          AS max_rss_bytes
    FROM points
    WHERE experiment = 'workloads' AND metric = 'wall_time'
),
perf_files AS (
    SELECT
        run_id,
        host,
        path,
        params ->> '$.workload'                                                   AS workload,
        params ->> '$.status'                                                     AS status,
        params ->> '$.failure'                                                    AS failure
    FROM raw_outputs
    WHERE experiment = 'workloads' AND tool = 'perf'
),
counted AS (
    SELECT
        run_id,
        host,
        path,
        max(value) FILTER (WHERE name = 'cycles' AND state = 'counted')                 AS cycles,
        max(value) FILTER (WHERE name = 'instructions' AND state = 'counted')           AS instructions,
        max(value) FILTER (WHERE name = 'branches' AND state = 'counted')               AS branches,
        max(value) FILTER (WHERE name = 'branch-misses' AND state = 'counted')          AS branch_misses,
        max(value) FILTER (WHERE name = 'cache-references' AND state = 'counted')       AS cache_references,
        max(value) FILTER (WHERE name = 'cache-misses' AND state = 'counted')           AS cache_misses,
        max(value) FILTER (WHERE name = 'L1-dcache-loads' AND state = 'counted')        AS l1d_loads,
        max(value) FILTER (WHERE name = 'L1-dcache-load-misses' AND state = 'counted')  AS l1d_load_misses,
        max(value) FILTER (WHERE name = 'dTLB-loads' AND state = 'counted')             AS dtlb_loads,
        max(value) FILTER (WHERE name = 'dTLB-load-misses' AND state = 'counted')       AS dtlb_load_misses,
        max(value) FILTER (WHERE name = 'iTLB-loads' AND state = 'counted')             AS itlb_loads,
        max(value) FILTER (WHERE name = 'iTLB-load-misses' AND state = 'counted')       AS itlb_load_misses,
        max(value) FILTER (WHERE name = 'task-clock' AND state = 'counted')             AS task_clock_ms,
        max(value) FILTER (WHERE name = 'context-switches' AND state = 'counted')       AS context_switches,
        max(value) FILTER (WHERE name = 'cpu-migrations' AND state = 'counted')         AS cpu_migrations,
        max(value) FILTER (WHERE name = 'page-faults' AND state = 'counted')            AS page_faults,
        count(*) FILTER (WHERE state = 'counted')                                       AS events_counted,
        string_agg(name, ', ' ORDER BY name) FILTER (WHERE state <> 'counted')          AS events_not_counted,
        bool_or(multiplexed)                                                            AS multiplexed
    FROM perf_counters
    WHERE experiment = 'workloads'
    GROUP BY ALL
),
joined AS (
    SELECT
        coalesce(t.run_id, f.run_id)                                              AS run_id,
        coalesce(t.host, f.host)                                                  AS host,
        coalesce(t.workload, f.workload)                                          AS workload,
        coalesce(f.status, 'ok')                                                  AS status,
        f.failure,
        t.runs,
        t.wall_median_s,
        t.wall_min_s,
        t.user_median_s,
        t.sys_median_s,
        t.max_rss_bytes,
        CASE WHEN c.cycles IS NOT NULL AND c.instructions IS NOT NULL THEN 'hardware'
             WHEN c.events_counted > 0 THEN 'software'
             ELSE 'none' END                                                      AS counter_tier,
        c.instructions / nullif(c.cycles, 0)                                      AS ipc,
        1000 * c.cache_misses / nullif(c.instructions, 0)                         AS cache_mpki,
        c.cache_misses / nullif(c.cache_references, 0)                            AS cache_miss_rate,
        c.l1d_load_misses / nullif(c.l1d_loads, 0)                                AS l1d_miss_rate,
        1000 * c.dtlb_load_misses / nullif(c.instructions, 0)                     AS dtlb_mpki,
        1000 * c.itlb_load_misses / nullif(c.instructions, 0)                     AS itlb_mpki,
        c.branch_misses / nullif(c.branches, 0)                                   AS branch_miss_rate,
        c.task_clock_ms,
        c.context_switches,
        c.cpu_migrations,
        c.page_faults,
        c.events_not_counted,
        coalesce(c.multiplexed, false)                                            AS multiplexed,
        f.path                                                                    AS perf_path
    FROM timed AS t
    FULL OUTER JOIN perf_files AS f
      ON f.run_id = t.run_id AND f.host = t.host AND f.workload = t.workload
    LEFT JOIN counted AS c
      ON c.run_id = f.run_id AND c.host = f.host AND c.path = f.path
),
classified AS (
    SELECT
        j.*,
        coalesce(j.cache_mpki >= th.cache_mpki, false) OR coalesce(j.l1d_miss_rate >= th.l1d_miss_rate, false)
            OR coalesce(j.dtlb_mpki >= th.dtlb_mpki, false)                       AS miss_sign,
        coalesce(j.itlb_mpki >= th.itlb_mpki, false)
            OR coalesce(j.branch_miss_rate >= th.branch_miss_rate, false)         AS front_end_sign,
        (j.cache_mpki IS NOT NULL OR j.l1d_miss_rate IS NOT NULL OR j.dtlb_mpki IS NOT NULL)
            AND (j.itlb_mpki IS NOT NULL OR j.branch_miss_rate IS NOT NULL)       AS signs_measurable,
        th.low_ipc
    FROM joined AS j, thresholds AS th
)
SELECT
    run_id,
    host,
    workload,
    status,
    failure,
    runs,
    wall_median_s,
    wall_min_s,
    user_median_s,
    sys_median_s,
    max_rss_bytes,
    counter_tier,
    ipc,
    cache_mpki,
    cache_miss_rate,
    l1d_miss_rate,
    dtlb_mpki,
    itlb_mpki,
    branch_miss_rate,
    task_clock_ms,
    context_switches,
    cpu_migrations,
    page_faults,
    multiplexed,
    CASE
        WHEN status = 'failed' THEN 'unclassified: the workload failed'
        WHEN counter_tier <> 'hardware' OR ipc IS NULL THEN 'unclassified: counters unavailable'
        WHEN ipc < low_ipc AND miss_sign THEN 'miss-bound'
        WHEN ipc < low_ipc AND front_end_sign THEN 'front-end-bound'
        WHEN ipc < low_ipc AND signs_measurable THEN 'store/dependency-bound'
        WHEN ipc < low_ipc THEN 'unclassified: counters unavailable'
        ELSE 'unclassified: no stall signature'
    END                                                                           AS classification,
    concat_ws('; ',
        'counter tier ' || counter_tier,
        CASE WHEN status = 'failed' THEN coalesce(failure, 'the command failed')
                                         || ' (its stderr tail is in experiments.error)' END,
        CASE WHEN counter_tier = 'none' THEN 'no perf stat: perf could not count on this host (facts perf)' END,
        CASE WHEN counter_tier <> 'hardware' AND events_not_counted IS NOT NULL
             THEN 'not counted: ' || events_not_counted END,
        printf('IPC %.2f (below %.1f is stalled)', ipc, low_ipc),
        printf('cache misses %.2f per 1k instructions (miss-bound from %.0f)', cache_mpki, 5.0),
        printf('L1d load misses %.1f%% of loads (from %.0f%%)', 100 * l1d_miss_rate, 10.0),
        printf('dTLB load misses %.2f per 1k instructions (from %.0f)', dtlb_mpki, 1.0),
        printf('iTLB misses %.2f per 1k instructions (front-end from %.1f)', itlb_mpki, 0.5),
        printf('branch misses %.1f%% of branches (front-end from %.0f%%)', 100 * branch_miss_rate, 5.0),
        CASE WHEN counter_tier = 'hardware' AND events_not_counted IS NOT NULL
             THEN 'not supported here: ' || events_not_counted END,
        CASE WHEN multiplexed THEN 'some counts multiplexed (scaled by perf)' END,
        printf('%.0f context switches, %.0f migrations, %.0f page faults', context_switches, cpu_migrations,
               page_faults)
    )                                                                             AS evidence,
    perf_path
FROM classified;
