-- benchmarks/sweep_accuracy.py: the THP latency curve the L1 and L2 are read from, its per-size minimum (what the
-- inference reads) in size order.
SELECT working_set_bytes, MIN(min_ns) AS min_ns, COUNT(*) AS points
FROM latency_curve
WHERE page_policy = 'thp'
GROUP BY working_set_bytes
ORDER BY working_set_bytes;
