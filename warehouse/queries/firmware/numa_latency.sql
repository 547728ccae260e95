-- The numa_matrix experiment's DRAM chase latency per (CPU node, memory node), with the ratio to the CPU node's
-- local latency. Parameters: run_id, host.
SELECT cpu_node, mem_node, median_ns, ratio_to_local
FROM numa_latency_matrix
WHERE run_id = ? AND host = ? AND cpu_node IS NOT NULL AND mem_node IS NOT NULL
ORDER BY cpu_node, mem_node
