-- report/numa_bandwidth_matrix: the NUMA bandwidth matrix of a batch of runs (the runs in chosen_runs).
SELECT *
FROM numa_bandwidth_matrix
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY cpu_node, mem_node
