-- report/tlb_reach: ns per access vs pages touched, per page size, of a batch of runs (the runs in
-- chosen_runs).
SELECT *
FROM tlb_reach
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY page_size, pages
