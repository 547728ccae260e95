-- Per chosen run and inferred level: latency, cycles, effective and sysfs size, and the single-thread read
-- bandwidth on the level's plateau. Parameters: hosts, run_ids (the chosen pairs), page policy.
WITH chosen AS (SELECT unnest(?::VARCHAR[]) AS host, unnest(?::VARCHAR[]) AS run_id)
SELECT l.host, l.run_id, l.level_index, l.level, l.latency_ns, l.latency_cycles, l.capacity_bytes, l.onset_bytes,
       l.completion_bytes, l.sysfs_size_bytes, l.note, CAST(b.bandwidth_gb_s AS DOUBLE) AS bandwidth_gb_s
FROM inferred_levels AS l SEMI JOIN chosen USING (host, run_id)
LEFT JOIN inferred_level_bandwidth AS b
  ON b.run_id = l.run_id AND b.host = l.host AND b.level = l.level AND b.op = 'read' AND b.store = 'none'
WHERE l.page_policy = ?
ORDER BY l.host, l.level_index
