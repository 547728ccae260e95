-- The TLB sweep per page size and page count (a reference host's published curve: control and paired NULL).
-- Parameters: run_id, host.
SELECT page_size, page_bytes, pages, tlb_min_ns, control_min_ns, paired_difference_median_ns
FROM tlb_reach
WHERE run_id = ? AND host = ?
ORDER BY pages
