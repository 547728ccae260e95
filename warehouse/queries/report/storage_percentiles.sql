-- report/storage_percentiles: storage latency percentiles per job and direction, of a batch of runs (their
-- run_ids, their hosts).
SELECT *
FROM storage_percentiles
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY job, direction, percentile
