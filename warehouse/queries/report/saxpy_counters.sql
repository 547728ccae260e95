-- report/saxpy_counters: perf counts per SAXPY stride, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM saxpy_counters
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY stride_elements, event
