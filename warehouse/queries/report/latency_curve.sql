-- report/latency_curve: the latency sweep's points, per page policy by working set, of a batch of runs
-- (their run_ids, their hosts).
SELECT *
FROM latency_curve
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY page_policy, working_set_bytes
