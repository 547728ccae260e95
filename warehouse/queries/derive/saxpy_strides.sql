-- SAXPY ns per update and slowdown per stride. Parameters: run_id, host.
SELECT stride_elements, ns_per_update, slowdown_vs_stride1
FROM saxpy_stride
WHERE run_id = ? AND host = ?
ORDER BY stride_elements
