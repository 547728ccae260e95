-- The latency sweep's fastest sample per point, with the core clock the kernel measured beside it (a minimum of
-- zero or less is kept: a relative reference curve reads 0 on its first plateau; derive drops it otherwise).
-- Each row says which core kind it measured (cpu_core_kinds): kind_rank (0 = fastest), and core_kind and the
-- pinned cpu where the host has more than one kind (NULL on a one-kind host). Parameters: run_id, host.
SELECT coalesce(k.kind_rank, 0), CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END,
       CASE WHEN k.kinds_on_host > 1 THEN c.cpu END,
       c.page_policy, c.working_set_bytes, c.min_ns, TRY_CAST(p.context ->> '$.core_clock_ghz' AS DOUBLE)
FROM latency_curve c
JOIN points p
  ON p.run_id = c.run_id AND p.host = c.host AND p.experiment = 'latency_sweep' AND p.point_index = c.point_index
LEFT JOIN cpu_core_kinds k ON k.run_id = c.run_id AND k.host = c.host AND k.cpu = c.cpu
WHERE c.run_id = ? AND c.host = ?
