-- The TLB sweeps of the chosen runs. Parameters: hosts, run_ids (the chosen pairs).
WITH chosen AS (SELECT unnest(?::VARCHAR[]) AS host, unnest(?::VARCHAR[]) AS run_id)
SELECT host, run_id, page_size, pages, translation_ns, paired_difference_median_ns
FROM tlb_reach SEMI JOIN chosen USING (host, run_id)
ORDER BY host, page_size, pages
