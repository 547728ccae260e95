-- report/affinity_summary: throughput and spread per workload and placement, of a batch of runs (the runs in
-- chosen_runs), with its threads per core kind where the host has more than one kind (NULL elsewhere).
SELECT a.* REPLACE (CASE WHEN EXISTS (FROM cpu_core_kinds AS k WHERE k.run_id = a.run_id AND k.host = a.host
                                      AND k.kinds_on_host > 1) THEN a.threads_by_core_kind END AS threads_by_core_kind)
FROM affinity_summary AS a
WHERE (a.run_id, a.host) IN (FROM chosen_runs)
ORDER BY a.workload, a.placement
