-- report/curve_tlb: ns per access of the one-line-per-page chain per pages touched, with the smallest page
-- size each run measured (4 KiB), of the runs in chosen_runs (columns as report/curve_latency).
SELECT run_id, host, pages AS point, pages AS x, tlb_median_ns AS y
FROM tlb_reach
WHERE (run_id, host) IN (FROM chosen_runs) AND tlb_median_ns > 0
QUALIFY page_bytes = min(page_bytes) OVER (PARTITION BY run_id, host)
ORDER BY run_id, host, x
