-- report/affinity_summary: throughput and spread per workload and placement, of a batch of runs (the runs in
-- chosen_runs).
SELECT *
FROM affinity_summary
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY workload, placement
