-- The inferred levels of two runs of one host. Parameters: host, baseline run_id, run_id, page policy.
SELECT run_id, level, level_index, latency_ns, capacity_bytes, plateau_first_bytes, plateau_last_bytes
FROM inferred_levels
WHERE host = ? AND run_id IN (?, ?) AND page_policy = ? AND level IS NOT NULL
