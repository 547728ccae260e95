-- report/loaded_latency_curve: the loaded-latency ladder per traffic mix, idle point first, of a batch of
-- runs (their run_ids, their hosts).
SELECT *
FROM loaded_latency_curve
WHERE list_contains(?, run_id) AND list_contains(?, host)
ORDER BY traffic, delay DESC NULLS FIRST
