-- report/latency_curve: the latency sweep's points, per page policy by working set, of a batch of runs
-- (the runs in chosen_runs); on a host with more than one core kind, each kind's curve (core_kind, fastest
-- kind first; NULL on a host with one kind).
SELECT c.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM latency_curve AS c
LEFT JOIN cpu_core_kinds AS k ON k.run_id = c.run_id AND k.host = c.host AND k.cpu = c.cpu
WHERE (c.run_id, c.host) IN (FROM chosen_runs)
ORDER BY coalesce(k.kind_rank, 0), c.page_policy, c.working_set_bytes
