-- report/experiments: every experiment of a batch of runs (the runs in chosen_runs) in the order it ran.
SELECT *
FROM experiments
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY run_order
