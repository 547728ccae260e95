-- report/saxpy_counters: perf counts per SAXPY stride, of a batch of runs (their run_ids, their hosts).
SELECT *
FROM saxpy_counters
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY stride_elements, event
