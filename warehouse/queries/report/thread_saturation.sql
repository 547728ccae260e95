-- report/thread_saturation: single-thread, peak and saturation of the thread sweep per op, of a batch of
-- runs (their run_ids, their hosts).
SELECT *
FROM thread_saturation
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY op, store
