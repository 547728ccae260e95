-- report/thread_saturation: single-thread, peak and saturation of the thread sweep per op, of a batch of
-- runs (the runs in chosen_runs).
SELECT *
FROM thread_saturation
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY op, store
