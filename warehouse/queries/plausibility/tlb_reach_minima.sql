-- Each measured TLB point's minima beside its control chain's (a published curve has no control), as page size,
-- pages, tlb_min_ns, control_min_ns, cpu (returned so that derive can ask it for a batch of runs at once: an
-- ORDER BY term must be a column outside the query). Parameters: run_id, host.
SELECT page_size, pages, tlb_min_ns, control_min_ns, cpu
FROM tlb_reach
WHERE run_id = ? AND host = ? AND tlb_min_ns > 0 AND control_min_ns > 0
ORDER BY page_size, pages, cpu
