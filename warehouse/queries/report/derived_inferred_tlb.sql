-- report/derived_inferred_tlb: the inferred_tlb rows of a batch of runs (their run_ids, their hosts), per
-- page size.
SELECT *
FROM inferred_tlb
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY page_bytes, page_size
