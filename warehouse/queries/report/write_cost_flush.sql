-- report/write_cost_flush: the clflush+mfence round trip, of a batch of runs (their run_ids, their hosts).
SELECT *
FROM write_cost_flush
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY variant
