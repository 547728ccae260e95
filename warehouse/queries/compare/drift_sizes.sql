-- The working sets two runs of one host measured. Parameters: host, baseline run_id, run_id, page policy.
SELECT run_id, working_set_bytes FROM latency_curve WHERE host = ? AND run_id IN (?, ?) AND page_policy = ?
