-- The numa_matrix experiment's read bandwidth (GB/s) per (CPU node, memory node). Parameters: run_id, host.
SELECT cpu_node, mem_node, median_gb_s, threads
FROM numa_bandwidth_matrix
WHERE run_id = ? AND host = ? AND cpu_node IS NOT NULL AND mem_node IS NOT NULL
ORDER BY cpu_node, mem_node
