-- report/fio_jobs: one row per fio job and direction, of a batch of runs (the runs in chosen_runs).
SELECT *
FROM fio_jobs
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY job, direction
