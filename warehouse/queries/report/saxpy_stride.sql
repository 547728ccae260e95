-- report/saxpy_stride: SAXPY time per update per stride, of a batch of runs (their run_ids, their hosts).
SELECT *
FROM saxpy_stride
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY stride_elements
