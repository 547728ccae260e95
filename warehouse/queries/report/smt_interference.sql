-- report/smt_interference: throughput per workload and placement (alone, siblings, cores), of a batch of
-- runs (the runs in chosen_runs).
SELECT *
FROM smt_interference
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY workload, placement
