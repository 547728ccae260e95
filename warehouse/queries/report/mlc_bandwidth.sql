-- report/mlc_bandwidth: MLC's bandwidth per mode and read-write mix, of a batch of runs (their run_ids,
-- their hosts).
SELECT *
FROM mlc_bandwidth
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY mode, path, run_index, row_index
