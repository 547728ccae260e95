-- report/mlc_matrix: MLC's NUMA latency/bandwidth and cache-to-cache matrices, of a batch of runs (their
-- run_ids, their hosts).
SELECT *
FROM mlc_matrix
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY mode, path, run_index, row_index
