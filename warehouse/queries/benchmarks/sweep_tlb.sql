-- benchmarks/sweep_accuracy.py: the 4 KiB TLB curve's entries with their brackets.
SELECT page_size, l1_entries, l1_low_pages, l1_high_pages, l2_entries, l2_low_pages, l2_high_pages
FROM inferred_tlb
WHERE page_size = '4k';
