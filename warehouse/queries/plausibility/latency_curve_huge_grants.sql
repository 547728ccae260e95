-- Huge pages granted per latency-sweep point that asked for them. Parameters: run_id, host.
SELECT page_policy, working_set_bytes, huge_bytes_granted
FROM latency_curve
WHERE run_id = ? AND host = ? AND page_policy IN ('thp', 'hugetlb')
