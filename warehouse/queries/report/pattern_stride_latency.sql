-- report/pattern_stride_latency: DRAM latency per pattern and stride, of a batch of runs (their run_ids,
-- their hosts).
SELECT *
FROM pattern_stride_latency
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY pattern, stride_bytes
