-- report/peak_flops: peak FLOP/s per class, precision and thread count, of a batch of runs (the runs in
-- chosen_runs): widest vector first, FP64 before FP32, one core before all.
SELECT *
FROM peak_flops
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY vector_bits DESC, class, precision DESC, threads
