-- Whether each huge-page TLB point got its huge pages. Parameters: run_id, host.
SELECT page_size, pages, huge_granted
FROM tlb_reach
WHERE run_id = ? AND host = ? AND page_size IN ('thp', 'hugetlb')
