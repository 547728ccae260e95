-- report/derived_flags: the flags rows of a batch of runs (the runs in chosen_runs), flagged first, then
-- not run, then clear.
SELECT *
FROM flags
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY status <> 'flagged', status <> 'not_run', rule, subject
