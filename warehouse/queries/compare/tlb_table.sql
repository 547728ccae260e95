-- The inferred TLB of the chosen runs. Parameters: hosts, run_ids (the chosen pairs).
WITH chosen AS (SELECT unnest(?::VARCHAR[]) AS host, unnest(?::VARCHAR[]) AS run_id)
SELECT * FROM inferred_tlb SEMI JOIN chosen USING (host, run_id) ORDER BY host, page_size
