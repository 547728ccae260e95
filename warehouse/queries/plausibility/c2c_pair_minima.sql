-- Each ordered CPU pair's fastest one-way c2c time beside its reverse's, as cpu_a, cpu_b, min_ns, reverse_min_ns
-- (one row per unordered pair: cpu_a < cpu_b; the median of a pair's repeated points). Parameters: run_id, host.
WITH pairs AS (
    SELECT cpu_a, cpu_b, median(min_ns) AS min_ns
    FROM c2c_matrix
    WHERE run_id = ? AND host = ? AND min_ns > 0 AND cpu_a IS NOT NULL AND cpu_b IS NOT NULL
    GROUP BY cpu_a, cpu_b
)
SELECT there.cpu_a, there.cpu_b, there.min_ns, back.min_ns AS reverse_min_ns
FROM pairs AS there
JOIN pairs AS back ON back.cpu_a = there.cpu_b AND back.cpu_b = there.cpu_a
WHERE there.cpu_a < there.cpu_b
ORDER BY there.cpu_a, there.cpu_b
