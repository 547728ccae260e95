-- report/bandwidth_points_bandwidth: the bandwidth sweep's points (experiment bandwidth), of a batch of
-- runs (the runs in chosen_runs); on a host with more than one core kind, each kind's single-thread sweep
-- (core_kind, fastest kind first; NULL on a host with one kind or no topology in its facts).
SELECT b.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM bandwidth_points AS b
LEFT JOIN cpu_core_kinds AS k ON k.run_id = b.run_id AND k.host = b.host AND k.cpu = b.cpu
WHERE (b.run_id, b.host) IN (FROM chosen_runs) AND b.experiment = 'bandwidth'
ORDER BY coalesce(k.kind_rank, 0), b.op, b.store, b.working_set_bytes
