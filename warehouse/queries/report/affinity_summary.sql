-- report/affinity_summary: throughput and spread per workload and placement, of a batch of runs (their
-- run_ids, their hosts).
SELECT *
FROM affinity_summary
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY workload, placement
