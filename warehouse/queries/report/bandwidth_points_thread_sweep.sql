-- report/bandwidth_points_thread_sweep: bandwidth per thread count (experiment thread_sweep), of a batch of
-- runs (the runs in chosen_runs); on a host with more than one core kind, core_kind is the kind of the CPU
-- each step added (the last of its params.cpus: the sweep takes CPUs fastest kind first), NULL elsewhere.
SELECT b.*, CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END AS core_kind
FROM bandwidth_points AS b
LEFT JOIN cpu_core_kinds AS k
  ON k.run_id = b.run_id AND k.host = b.host AND k.cpu = TRY_CAST(json_extract(CASE WHEN json_valid(b.cpus) THEN b.cpus END, '$[#-1]') AS INTEGER)
WHERE (b.run_id, b.host) IN (FROM chosen_runs) AND b.experiment = 'thread_sweep'
ORDER BY b.op, b.threads
