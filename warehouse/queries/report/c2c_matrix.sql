-- report/c2c_matrix: one-way core-to-core latency per ordered CPU pair, of a batch of runs (their run_ids,
-- their hosts).
SELECT *
FROM c2c_matrix
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY cpu_a, cpu_b
