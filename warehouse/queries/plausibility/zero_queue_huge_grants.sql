-- Huge pages granted per zero_queue point that asked for them. Parameters: run_id, host.
SELECT level || ' ' || page_policy, working_set_bytes, huge_bytes_granted
FROM zero_queue_levels
WHERE run_id = ? AND host = ? AND page_policy IN ('thp', 'hugetlb')
