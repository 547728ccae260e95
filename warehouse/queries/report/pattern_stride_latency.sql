-- report/pattern_stride_latency: DRAM latency per pattern and stride, of a batch of runs (the runs in
-- chosen_runs).
SELECT *
FROM pattern_stride_latency
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY pattern, stride_bytes
