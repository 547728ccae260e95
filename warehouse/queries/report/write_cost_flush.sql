-- report/write_cost_flush: the clflush+mfence round trip, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM write_cost_flush
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY variant
