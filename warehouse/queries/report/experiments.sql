-- report/experiments: every experiment of a batch of runs (their run_ids, their hosts) in the order it ran.
SELECT *
FROM experiments
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY run_order
