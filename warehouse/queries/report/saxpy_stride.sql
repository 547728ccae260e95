-- report/saxpy_stride: SAXPY time per update per stride, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM saxpy_stride
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY stride_elements
