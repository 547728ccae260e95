-- compare/level_samples: every raw latency sample on each inferred level's plateau (the latency sweep's
-- points between the plateau's first and last working set, pinned to the CPU the level was inferred on), per
-- run, core kind (kind_rank 0 = the fastest; one kind on most hosts), page policy and level, of the runs in
-- chosen_runs: what the Mann-Whitney test of a level's latency compares.
SELECT l.run_id, l.host, coalesce(k.kind_rank, 0) AS kind_rank, l.page_policy, l.level, list(s.value) AS samples
FROM inferred_levels AS l
JOIN latency_curve AS c
  ON c.run_id = l.run_id AND c.host = l.host AND c.page_policy IS NOT DISTINCT FROM l.page_policy
 AND c.working_set_bytes BETWEEN l.plateau_first_bytes AND l.plateau_last_bytes
 AND (l.cpu IS NULL OR c.cpu = l.cpu)
JOIN samples AS s
  ON s.run_id = c.run_id AND s.host = c.host AND s.experiment = 'latency_sweep' AND s.point_index = c.point_index
LEFT JOIN cpu_core_kinds AS k ON k.run_id = l.run_id AND k.host = l.host AND k.cpu = l.cpu
WHERE (l.run_id, l.host) IN (FROM chosen_runs) AND l.level IS NOT NULL
GROUP BY ALL
