-- report/mlc_loaded_latency: MLC's loaded-latency ladders, largest delay (idle) first, of a batch of runs
-- (their run_ids, their hosts).
SELECT *
FROM mlc_loaded_latency
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY path, run_index, delay_cycles DESC
