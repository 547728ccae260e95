-- report/smt_interference: throughput per workload and placement (alone, siblings, cores), of a batch of
-- runs (their run_ids, their hosts).
SELECT *
FROM smt_interference
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY workload, placement
