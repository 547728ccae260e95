-- workload_profile: every profiled workload, one row per workload and run: the reference workload the
-- workloads role runs on every host, the user's fleet_workloads, and perf outputs `fleetscope import perf`
-- brought. Its wall time and CPU time (the `workload` kernel's records), whether it ran, and its case as
-- fleetscope.analyze.profiling read it from its perf stat counts and its perf record profiles (table
-- workload_cases): the rates, the counter tier they rest on, the case with its evidence and next step, or what
-- could not be decided and why. A count the host could not make is NULL, and so is every rate built on it.
CREATE OR REPLACE VIEW workload_profile AS
WITH timed AS (
    SELECT
        run_id,
        host,
        experiment,
        params ->> '$.workload'                                                   AS workload,
        summary_count                                                             AS runs,
        summary_median                                                            AS wall_median_s,
        summary_min                                                               AS wall_min_s,
        summary_mean                                                              AS wall_mean_s,
        (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
            AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS wall_std_s,
        list_median(from_json(context -> '$.user_s', '["DOUBLE"]'))               AS user_median_s,
        list_median(from_json(context -> '$.sys_s', '["DOUBLE"]'))                AS sys_median_s,
        list_max(from_json(context -> '$.max_rss_bytes', '["UBIGINT"]'))          AS max_rss_bytes
    FROM points
    WHERE experiment = 'workloads' AND metric = 'wall_time'
    -- one timing per workload (the role writes one): a host repeating it must not multiply its perf files' rows
    QUALIFY row_number() OVER (PARTITION BY run_id, host, experiment, workload ORDER BY point_index) = 1
),
perf_files AS (
    SELECT
        run_id,
        host,
        experiment,
        coalesce(params ->> '$.workload', regexp_replace(path, '^.*/|\.[^./]*$', '', 'g')) AS workload,
        params ->> '$.status'                                                     AS status,
        params ->> '$.failure'                                                    AS failure,
        (params ->> '$.reference')::BOOLEAN                                       AS reference,
        path
    FROM raw_outputs
    WHERE experiment IN ('workloads', 'perf') AND tool = 'perf'
),
software AS (
    SELECT
        run_id,
        host,
        path,
        max(value) FILTER (WHERE name = 'task-clock' AND state = 'counted')             AS task_clock_ms,
        max(value) FILTER (WHERE name = 'context-switches' AND state = 'counted')       AS context_switches,
        max(value) FILTER (WHERE name = 'cpu-migrations' AND state = 'counted')         AS cpu_migrations,
        max(value) FILTER (WHERE name = 'page-faults' AND state = 'counted')            AS page_faults
    FROM perf_counters
    WHERE experiment IN ('workloads', 'perf')
    GROUP BY ALL
),
named AS (
    SELECT run_id, host, experiment, workload FROM timed
    UNION
    SELECT run_id, host, experiment, workload FROM perf_files
    UNION
    SELECT run_id, host, experiment, workload FROM workload_cases
)
SELECT
    n.run_id,
    n.host,
    n.experiment,
    n.workload,
    coalesce(f.reference, false)                                                  AS reference,
    coalesce(f.status, 'ok')                                                      AS status,
    f.failure,
    t.runs,
    t.wall_median_s,
    t.wall_min_s,
    t.wall_mean_s,
    t.wall_std_s,
    t.user_median_s,
    t.sys_median_s,
    t.max_rss_bytes,
    coalesce(c.counter_tier, 'none')                                              AS counter_tier,
    c.ipc,
    c.cache_mpki,
    c.cache_miss_rate,
    c.llc_mpki,
    c.l1d_miss_rate,
    c.dtlb_mpki,
    c.itlb_mpki,
    c.icache_mpki,
    c.branch_miss_rate,
    s.task_clock_ms,
    s.context_switches,
    s.cpu_migrations,
    s.page_faults,
    c.multiplexed,
    c.running_percent_min,
    c.not_supported,
    c.case_id,
    coalesce(c.classification, 'undecided: no perf output')                       AS classification,
    concat_ws('; ', 'counter tier ' || coalesce(c.counter_tier, 'none'), c.evidence) AS evidence,
    c.next_step,
    c.undecided,
    c.noticed,
    c.time_event,
    c.time_samples,
    c.time_rule,
    c.miss_event,
    c.miss_samples,
    c.miss_rule,
    c.miss_note,
    f.path                                                                        AS perf_path
FROM named AS n
LEFT JOIN timed AS t USING (run_id, host, experiment, workload)
LEFT JOIN perf_files AS f USING (run_id, host, experiment, workload)
LEFT JOIN workload_cases AS c USING (run_id, host, experiment, workload)
LEFT JOIN software AS s ON s.run_id = f.run_id AND s.host = f.host AND s.path = f.path;
