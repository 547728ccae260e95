-- Inferred levels beside sysfs, one row per level (and core kind, on a hybrid host), for every host's latest run.
SELECT l.host, l.core_kind, l.level, round(l.latency_ns, 2) AS ns, round(l.latency_cycles, 1) AS cycles,
       l.capacity_bytes div 1024 AS effective_kib, l.sysfs_size_bytes div 1024 AS sysfs_kib
FROM inferred_levels l JOIN latest_runs USING (host, run_id)
WHERE l.page_policy = 'thp' ORDER BY l.host, l.core_kind NULLS FIRST, l.level_index;
