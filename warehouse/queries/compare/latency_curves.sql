-- The latency curves of the chosen runs, fastest and median per size. Parameters: hosts, run_ids (lists
-- of the same length: the chosen (host, run_id) pairs).
WITH chosen AS (SELECT unnest(?::VARCHAR[]) AS host, unnest(?::VARCHAR[]) AS run_id)
SELECT host, run_id, page_policy, working_set_bytes, min(min_ns) AS min_ns, median(median_ns) AS median_ns
FROM latency_curve SEMI JOIN chosen USING (host, run_id)
GROUP BY ALL
ORDER BY host, page_policy, working_set_bytes
