-- report/derived_flags: the flags rows of a batch of runs (their run_ids, their hosts), flagged first, then
-- not run, then clear.
SELECT *
FROM flags
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY status <> 'flagged', status <> 'not_run', rule, subject
