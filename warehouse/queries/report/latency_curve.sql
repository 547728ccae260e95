-- report/latency_curve: the latency sweep's points, per page policy by working set, of a batch of runs
-- (the runs in chosen_runs).
SELECT *
FROM latency_curve
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY page_policy, working_set_bytes
