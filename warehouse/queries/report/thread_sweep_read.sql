-- report/thread_sweep_read: the summary's read bandwidth of a batch of runs (the runs in chosen_runs):
-- the thread sweep's single-thread figure, its figure at the most threads it ran (all_threads_gb_s) and its
-- peak.
SELECT s.run_id, s.host, s.op, s.store, s.max_threads, s.single_thread_gb_s, s.peak_gb_s, s.peak_threads,
       s.saturation_threads, p.median_gb_s AS all_threads_gb_s
FROM thread_saturation AS s
LEFT JOIN bandwidth_points AS p
  ON p.run_id = s.run_id AND p.host = s.host AND p.experiment = 'thread_sweep' AND p.op = s.op
 AND p.store = s.store AND p.threads = s.max_threads
WHERE (s.run_id, s.host) IN (FROM chosen_runs) AND s.op = 'read'
ORDER BY s.store
