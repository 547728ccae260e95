-- report/derived_inferred_tlb: the inferred_tlb rows of a batch of runs (the runs in chosen_runs), per
-- page size.
SELECT *
FROM inferred_tlb
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY page_bytes, page_size
