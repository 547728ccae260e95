-- report/derived_workload_functions: each workload's functions, time share beside miss share, of a batch of runs
-- (the runs in chosen_runs): the functions with at least 0.5% of either profile, at most 20 per workload (the
-- warehouse keeps them all), the reference workload first.
SELECT f.run_id, f.host, f.workload, f.symbol, f.dso, f.kernel, f.time_share, f.time_share_below, f.time_rank,
       f.miss_share, f.miss_share_below, f.miss_rank, f.miss_per_time, f.ratio_bound, f.mark
FROM workload_functions AS f
LEFT JOIN workload_profile AS p USING (run_id, host, experiment, workload)
WHERE (f.run_id, f.host) IN (FROM chosen_runs)
  AND greatest(coalesce(f.time_share, 0), coalesce(f.miss_share, 0)) >= 0.005
QUALIFY row_number() OVER (PARTITION BY f.run_id, f.host, f.experiment, f.workload ORDER BY f.function_index) <= 20
ORDER BY NOT coalesce(p.reference, false), f.workload, f.function_index
