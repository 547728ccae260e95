-- host_headlines: one row per host, its latest run's headline figures: what the host page's summary, the fleet
-- page, `compare`, `check` and `export --openmetrics` show (fleetscope.report.fleet.run_values computes the same
-- from the same tables; tests/unit/test_host_headlines.py holds them equal). Levels are those of the fastest
-- core kind, in THP pages where the run has them, each size with its bracket and method; the last level (memory)
-- has no size; TLB entries with their brackets; a reference host's
-- relative curve (ns over L1) has no level latency. The compute figures are view compute_figures': the integer
-- clock with one core and with all active, the widest class's FP64 FLOP/s and FLOP per cycle per core.
CREATE OR REPLACE VIEW host_headlines AS
WITH latest AS (
    SELECT l.run_id, l.host, l.started_at, l.origin = 'reference' AS is_reference,
           coalesce(TRY_CAST(r.reference ->> '$.relative' AS BOOLEAN), false) AS relative_to_l1
    FROM latest_runs AS l
    JOIN runs AS r USING (run_id, host)
),
levels AS (
    SELECT lv.*, coalesce(k.kind_rank, 0) AS kind_rank
    FROM inferred_levels AS lv
    JOIN latest USING (run_id, host)
    LEFT JOIN cpu_core_kinds AS k ON k.run_id = lv.run_id AND k.host = lv.host AND k.cpu = lv.cpu
),
kind AS (  -- the fastest kind, as the report queries order them
    SELECT run_id, host, arg_min(core_kind, (kind_rank, coalesce(core_kind, chr(1114111)))) AS core_kind
    FROM levels
    GROUP BY run_id, host
),
policy AS (  -- THP where the kind has it, else the first page policy by name
    SELECT lv.run_id, lv.host,
           CASE WHEN bool_or(lv.page_policy = 'thp') THEN 'thp' ELSE min(lv.page_policy) END AS page_policy
    FROM levels AS lv
    JOIN kind AS k ON k.run_id = lv.run_id AND k.host = lv.host AND lv.core_kind IS NOT DISTINCT FROM k.core_kind
    GROUP BY lv.run_id, lv.host
),
shown AS (
    SELECT lv.run_id, lv.host, lower(lv.level) AS level, lv.latency_ns, lv.capacity_bytes, lv.size_low_bytes,
           lv.size_high_bytes, lv.size_method,
           lv.level_index = max(lv.level_index) OVER (PARTITION BY lv.run_id, lv.host) AS is_last
    FROM levels AS lv
    JOIN kind AS k ON k.run_id = lv.run_id AND k.host = lv.host AND lv.core_kind IS NOT DISTINCT FROM k.core_kind
    JOIN policy AS p ON p.run_id = lv.run_id AND p.host = lv.host AND lv.page_policy IS NOT DISTINCT FROM p.page_policy
    WHERE lv.level IS NOT NULL AND lv.level <> ''
),
level_figures AS (
    SELECT run_id, host,
           max(capacity_bytes) FILTER (WHERE level = 'l1' AND NOT is_last) AS l1_size_bytes,
           max(size_low_bytes) FILTER (WHERE level = 'l1' AND NOT is_last) AS l1_size_low_bytes,
           max(size_high_bytes) FILTER (WHERE level = 'l1' AND NOT is_last) AS l1_size_high_bytes,
           max(size_method) FILTER (WHERE level = 'l1' AND NOT is_last) AS l1_size_method,
           max(latency_ns) FILTER (WHERE level = 'l1')                     AS l1_latency_ns,
           max(capacity_bytes) FILTER (WHERE level = 'l2' AND NOT is_last) AS l2_size_bytes,
           max(size_low_bytes) FILTER (WHERE level = 'l2' AND NOT is_last) AS l2_size_low_bytes,
           max(size_high_bytes) FILTER (WHERE level = 'l2' AND NOT is_last) AS l2_size_high_bytes,
           max(size_method) FILTER (WHERE level = 'l2' AND NOT is_last) AS l2_size_method,
           max(latency_ns) FILTER (WHERE level = 'l2')                     AS l2_latency_ns,
           max(capacity_bytes) FILTER (WHERE level = 'l3' AND NOT is_last) AS l3_size_bytes,
           max(size_low_bytes) FILTER (WHERE level = 'l3' AND NOT is_last) AS l3_size_low_bytes,
           max(size_high_bytes) FILTER (WHERE level = 'l3' AND NOT is_last) AS l3_size_high_bytes,
           max(size_method) FILTER (WHERE level = 'l3' AND NOT is_last) AS l3_size_method,
           max(latency_ns) FILTER (WHERE level = 'l3')                     AS l3_latency_ns,
           max(capacity_bytes) FILTER (WHERE level = 'l4' AND NOT is_last) AS l4_size_bytes,
           max(size_low_bytes) FILTER (WHERE level = 'l4' AND NOT is_last) AS l4_size_low_bytes,
           max(size_high_bytes) FILTER (WHERE level = 'l4' AND NOT is_last) AS l4_size_high_bytes,
           max(size_method) FILTER (WHERE level = 'l4' AND NOT is_last) AS l4_size_method,
           max(latency_ns) FILTER (WHERE level = 'l4')                     AS l4_latency_ns,
           max(latency_ns) FILTER (WHERE level = 'dram')                   AS dram_latency_ns
    FROM shown
    GROUP BY run_id, host
),
tlb AS (  -- the fastest kind's TLB at its smallest page size
    SELECT t.run_id, t.host,
           arg_min(t.l1_entries, (coalesce(k.kind_rank, 0), coalesce(t.core_kind, chr(1114111)), coalesce(t.page_bytes, 0),
                                  t.page_size)) AS tlb_l1_entries,
           arg_min(t.l1_low_pages, (coalesce(k.kind_rank, 0), coalesce(t.core_kind, chr(1114111)), coalesce(t.page_bytes, 0),
                                  t.page_size)) AS tlb_l1_entries_low,
           arg_min(t.l1_high_pages, (coalesce(k.kind_rank, 0), coalesce(t.core_kind, chr(1114111)), coalesce(t.page_bytes, 0),
                                  t.page_size)) AS tlb_l1_entries_high,
           arg_min(t.l2_entries, (coalesce(k.kind_rank, 0), coalesce(t.core_kind, chr(1114111)), coalesce(t.page_bytes, 0),
                                  t.page_size)) AS tlb_l2_entries,
           arg_min(t.l2_low_pages, (coalesce(k.kind_rank, 0), coalesce(t.core_kind, chr(1114111)), coalesce(t.page_bytes, 0),
                                  t.page_size)) AS tlb_l2_entries_low,
           arg_min(t.l2_high_pages, (coalesce(k.kind_rank, 0), coalesce(t.core_kind, chr(1114111)), coalesce(t.page_bytes, 0),
                                  t.page_size)) AS tlb_l2_entries_high
    FROM inferred_tlb AS t
    JOIN latest USING (run_id, host)
    LEFT JOIN cpu_core_kinds AS k ON k.run_id = t.run_id AND k.host = t.host AND k.cpu = t.cpu
    GROUP BY t.run_id, t.host
),
mlp AS (
    SELECT m.run_id, m.host, arg_min(m.max_mlp, m.working_set_bytes) AS mlp
    FROM inferred_mlp AS m
    JOIN latest USING (run_id, host)
    GROUP BY m.run_id, m.host
),
read_bandwidth AS (  -- the thread sweep's read figures of its first store kind (by name)
    SELECT s.run_id, s.host,
           arg_min(s.single_thread_gb_s, s.store) AS read_1_thread_gb_s,
           arg_min(CASE WHEN s.max_threads <> 1 THEN p.median_gb_s END, s.store) AS read_all_threads_gb_s
    FROM thread_saturation AS s
    JOIN latest USING (run_id, host)
    LEFT JOIN bandwidth_points AS p
      ON p.run_id = s.run_id AND p.host = s.host AND p.experiment = 'thread_sweep' AND p.op = s.op
     AND p.store = s.store AND p.threads = s.max_threads
    WHERE s.op = 'read'
    GROUP BY s.run_id, s.host
),
storage AS (  -- p99 at queue depth 1 of the pure random read and write jobs (of every random job where neither ran)
    SELECT run_id, host,
           arg_min(latency_ns, (rw, job)) FILTER (WHERE direction = 'read' AND (pure OR NOT has_pure))  AS storage_p99_read_ns,
           arg_min(latency_ns, (rw, job)) FILTER (WHERE direction = 'write' AND (pure OR NOT has_pure)) AS storage_p99_write_ns
    FROM (
        SELECT s.run_id, s.host, s.rw, s.job, s.direction, s.latency_ns, s.rw IN ('randread', 'randwrite') AS pure,
               bool_or(s.rw IN ('randread', 'randwrite')) OVER (PARTITION BY s.run_id, s.host) AS has_pure
        FROM storage_percentiles AS s
        JOIN latest USING (run_id, host)
        WHERE s.queue_depth = 1 AND s.percentile = 99 AND s.rw LIKE 'rand%'
    )
    GROUP BY run_id, host
),
reference_workload AS (  -- the reference workload's median wall time, where it ran
    SELECT w.run_id, w.host, arg_min(w.wall_median_s, w.workload) AS reference_workload_s
    FROM workload_profile AS w
    JOIN latest USING (run_id, host)
    WHERE w.reference AND w.status = 'ok' AND w.wall_median_s IS NOT NULL
    GROUP BY w.run_id, w.host
),
checks AS (
    SELECT f.run_id, f.host,
           count(*) FILTER (WHERE f.status = 'flagged') AS flags,
           min(f.value) FILTER (WHERE f.rule = 'huge_pages_not_granted' AND f.subject = 'latency_curve'
                                  AND f.status <> 'not_run' AND f.value IS NOT NULL) AS thp_granted
    FROM flags AS f
    JOIN latest USING (run_id, host)
    GROUP BY f.run_id, f.host
)
SELECT
    latest.host,
    latest.run_id,
    latest.started_at,
    latest.is_reference,
    level_figures.l1_size_bytes,
    level_figures.l1_size_low_bytes,
    level_figures.l1_size_high_bytes,
    level_figures.l1_size_method,
    CASE WHEN NOT latest.relative_to_l1 THEN level_figures.l1_latency_ns END AS l1_latency_ns,
    level_figures.l2_size_bytes,
    level_figures.l2_size_low_bytes,
    level_figures.l2_size_high_bytes,
    level_figures.l2_size_method,
    CASE WHEN NOT latest.relative_to_l1 THEN level_figures.l2_latency_ns END AS l2_latency_ns,
    level_figures.l3_size_bytes,
    level_figures.l3_size_low_bytes,
    level_figures.l3_size_high_bytes,
    level_figures.l3_size_method,
    CASE WHEN NOT latest.relative_to_l1 THEN level_figures.l3_latency_ns END AS l3_latency_ns,
    level_figures.l4_size_bytes,
    level_figures.l4_size_low_bytes,
    level_figures.l4_size_high_bytes,
    level_figures.l4_size_method,
    CASE WHEN NOT latest.relative_to_l1 THEN level_figures.l4_latency_ns END AS l4_latency_ns,
    CASE WHEN NOT latest.relative_to_l1 THEN level_figures.dram_latency_ns END AS dram_latency_ns,
    tlb.tlb_l1_entries,
    tlb.tlb_l1_entries_low,
    tlb.tlb_l1_entries_high,
    CASE WHEN tlb.tlb_l1_entries IS NOT NULL THEN 'onset' END AS tlb_l1_entries_method,
    tlb.tlb_l2_entries,
    tlb.tlb_l2_entries_low,
    tlb.tlb_l2_entries_high,
    CASE WHEN tlb.tlb_l2_entries IS NOT NULL THEN 'onset' END AS tlb_l2_entries_method,
    mlp.mlp,
    read_bandwidth.read_1_thread_gb_s,
    read_bandwidth.read_all_threads_gb_s,
    storage.storage_p99_read_ns,
    storage.storage_p99_write_ns,
    reference_workload.reference_workload_s,
    compute.clock_1_core_ghz,
    CASE WHEN compute.clock_1_core_ghz IS NOT NULL AND compute.clock_cores > 1 THEN compute.clock_all_cores_ghz END
        AS clock_all_cores_ghz,
    compute.fp64_1_core_gflop_s,
    CASE WHEN compute.fp64_1_core_gflop_s IS NOT NULL AND compute.flops_cores > 1 THEN compute.fp64_all_cores_gflop_s END
        AS fp64_all_cores_gflop_s,
    CASE WHEN compute.fp64_1_core_gflop_s IS NOT NULL THEN compute.fp64_flop_per_cycle END AS fp64_flop_per_cycle,
    coalesce(checks.flags, 0) AS flags,
    checks.thp_granted
FROM latest
LEFT JOIN level_figures USING (run_id, host)
LEFT JOIN tlb USING (run_id, host)
LEFT JOIN mlp USING (run_id, host)
LEFT JOIN read_bandwidth USING (run_id, host)
LEFT JOIN storage USING (run_id, host)
LEFT JOIN reference_workload USING (run_id, host)
LEFT JOIN compute_figures AS compute USING (run_id, host)
LEFT JOIN checks USING (run_id, host);
