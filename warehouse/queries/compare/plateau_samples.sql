-- Every raw latency sample of one run at the given working sets. Parameters: host, run_id, page policy,
-- working sets (a list of bytes).
SELECT s.value
FROM latency_curve c
JOIN samples s
  ON s.run_id = c.run_id AND s.host = c.host AND s.experiment = 'latency_sweep' AND s.point_index = c.point_index
WHERE c.host = ? AND c.run_id = ? AND c.page_policy = ? AND list_contains(?::BIGINT[], c.working_set_bytes)
