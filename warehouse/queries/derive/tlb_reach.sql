-- The TLB sweep per page size and page count (a reference host's published curve: control and paired NULL).
-- Only the fastest core kind measured (cpu_core_kinds), where a host has more than one. Parameters: run_id, host.
SELECT page_size, page_bytes, pages, tlb_min_ns, control_min_ns, paired_difference_median_ns
FROM tlb_reach AS v
LEFT JOIN cpu_core_kinds k ON k.run_id = v.run_id AND k.host = v.host AND k.cpu = v.cpu
WHERE v.run_id = ? AND v.host = ?
QUALIFY coalesce(k.kind_rank, 0) = min(coalesce(k.kind_rank, 0)) OVER ()
ORDER BY pages
