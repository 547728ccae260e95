-- report/storage_p99_qd1: the summary's storage figure of a batch of runs (their run_ids, their hosts): the
-- 99th percentile latency of every random-access job and direction at queue depth 1.
SELECT run_id, host, rw, direction, block_size_bytes, job, latency_ns
FROM storage_percentiles
WHERE list_contains(?, run_id) AND list_contains(?, host) AND queue_depth = 1 AND percentile = 99 AND rw LIKE 'rand%'
ORDER BY rw <> 'randread', rw <> 'randwrite', rw, direction, job
