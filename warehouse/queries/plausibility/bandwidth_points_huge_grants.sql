-- Huge pages granted per thread of each bandwidth point on THP. Parameters: run_id, host.
SELECT experiment || ': ' || op || ' x' || threads, working_set_bytes, huge_bytes_granted / threads
FROM bandwidth_points
WHERE run_id = ? AND host = ? AND page_policy = 'thp'
