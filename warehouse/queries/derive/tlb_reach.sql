-- The TLB sweep per page size and page count (a reference host's published curve: control and paired NULL).
-- Each row's core kind as in latency_minima.sql: kind_rank, core_kind, cpu. Parameters: run_id, host.
SELECT coalesce(k.kind_rank, 0), CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END,
       CASE WHEN k.kinds_on_host > 1 THEN v.cpu END,
       page_size, page_bytes, pages, tlb_min_ns, control_min_ns, paired_difference_median_ns
FROM tlb_reach AS v
LEFT JOIN cpu_core_kinds k ON k.run_id = v.run_id AND k.host = v.host AND k.cpu = v.cpu
WHERE v.run_id = ? AND v.host = ?
ORDER BY pages
