-- report/storage_p99_qd1: the summary's storage figure of a batch of runs (the runs in chosen_runs): the
-- 99th percentile latency of every random-access job and direction at queue depth 1.
SELECT run_id, host, rw, direction, block_size_bytes, job, latency_ns
FROM storage_percentiles
WHERE (run_id, host) IN (FROM chosen_runs) AND queue_depth = 1 AND percentile = 99 AND rw LIKE 'rand%'
ORDER BY rw <> 'randread', rw <> 'randwrite', rw, direction, job
