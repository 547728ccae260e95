-- report/bandwidth_points_prefetch: read bandwidth with and without prefetch (experiments prefetch,
-- prefetch_hw_off), of a batch of runs (their run_ids, their hosts).
SELECT *
FROM bandwidth_points
WHERE list_contains(?, run_id) AND list_contains(?, host) AND experiment IN ('prefetch', 'prefetch_hw_off')
ORDER BY hw_prefetchers, stride_bytes, prefetch
