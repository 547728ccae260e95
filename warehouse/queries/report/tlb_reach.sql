-- report/tlb_reach: ns per access vs pages touched, per page size, of a batch of runs (their run_ids, their
-- hosts).
SELECT *
FROM tlb_reach
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY page_size, pages
