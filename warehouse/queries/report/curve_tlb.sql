-- report/curve_tlb: ns per access of the one-line-per-page chain per pages touched, with the smallest page
-- size each run measured (4 KiB), of the fastest core kind where a host measured several (cpu_core_kinds), of
-- the runs in chosen_runs (columns as report/curve_latency); one line per page, not a page-stride sweep.
SELECT t.run_id, t.host, t.pages AS point, t.pages AS x, t.tlb_median_ns AS y
FROM tlb_reach AS t
LEFT JOIN cpu_core_kinds AS k ON k.run_id = t.run_id AND k.host = t.host AND k.cpu = t.cpu
WHERE (t.run_id, t.host) IN (FROM chosen_runs) AND t.tlb_median_ns > 0
  AND t.page_stride_bytes IS NOT DISTINCT FROM t.page_bytes  -- a sweep by page stride is not the reach curve
QUALIFY coalesce(k.kind_rank, 0) = min(coalesce(k.kind_rank, 0)) OVER (PARTITION BY t.run_id, t.host)
    AND t.page_bytes = min(t.page_bytes) OVER (PARTITION BY t.run_id, t.host)
ORDER BY t.run_id, t.host, x
