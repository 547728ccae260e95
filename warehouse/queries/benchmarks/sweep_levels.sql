-- benchmarks/sweep_accuracy.py: the L1 and L2 of the THP latency curve (the hierarchy's) with their size brackets.
SELECT level, capacity_bytes, size_low_bytes, size_high_bytes, size_estimator, size_method, sysfs_size_bytes
FROM inferred_levels
WHERE page_policy = 'thp' AND level IN ('L1', 'L2')
ORDER BY level_index;
