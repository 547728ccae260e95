-- report/mlc_idle_latency: MLC's idle latency per level, of a batch of runs (their run_ids, their hosts).
SELECT *
FROM mlc_idle_latency
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY path, run_index, buffer_bytes
