-- The largest working set the latency sweep measured, per page policy. Parameters: run_id, host.
SELECT page_policy, max(working_set_bytes) FROM latency_curve WHERE run_id = ? AND host = ? GROUP BY page_policy
