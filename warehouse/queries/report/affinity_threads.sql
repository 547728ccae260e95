-- report/affinity_threads: every thread's throughput per placement and repeat, of a batch of runs (the runs
-- in chosen_runs), with the core kind(s) it ran on where the host has more than one kind (NULL elsewhere).
SELECT a.* REPLACE (CASE WHEN EXISTS (FROM cpu_core_kinds AS k WHERE k.run_id = a.run_id AND k.host = a.host
                                      AND k.kinds_on_host > 1) THEN a.core_kind END AS core_kind)
FROM affinity_threads AS a
WHERE (a.run_id, a.host) IN (FROM chosen_runs)
ORDER BY a.workload, a.placement, a.repeat, a.thread
