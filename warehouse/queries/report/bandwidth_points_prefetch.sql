-- report/bandwidth_points_prefetch: read bandwidth with and without prefetch (experiments prefetch,
-- prefetch_hw_off), of a batch of runs (the runs in chosen_runs).
SELECT *
FROM bandwidth_points
WHERE (run_id, host) IN (FROM chosen_runs) AND experiment IN ('prefetch', 'prefetch_hw_off')
ORDER BY hw_prefetchers, stride_bytes, prefetch
