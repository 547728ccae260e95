-- report/fio_jobs: one row per fio job and direction, of a batch of runs (their run_ids, their hosts).
SELECT *
FROM fio_jobs
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY job, direction
