-- benchmarks/sweep_accuracy.py: the 4 KiB TLB curve the entries are read from: per page count, the paired
-- TLB-minus-control difference (median) the inference reads on top of the control chain's L1 latency.
SELECT pages, MEDIAN(paired_difference_median_ns) AS paired_ns
FROM tlb_reach
WHERE page_size = '4k'
GROUP BY pages
ORDER BY pages;
