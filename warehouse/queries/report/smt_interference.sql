-- report/smt_interference: throughput per workload and placement (alone, siblings, cores), of a batch of
-- runs (the runs in chosen_runs), with the core kind(s) of each placement's CPUs where the host has more
-- than one kind (NULL elsewhere).
SELECT s.* REPLACE (CASE WHEN EXISTS (FROM cpu_core_kinds AS k WHERE k.run_id = s.run_id AND k.host = s.host
                                      AND k.kinds_on_host > 1) THEN s.core_kind END AS core_kind)
FROM smt_interference AS s
WHERE (s.run_id, s.host) IN (FROM chosen_runs)
ORDER BY s.workload, s.placement
