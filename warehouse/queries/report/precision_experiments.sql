-- report/precision_experiments: each chosen run's precision per experiment (view precision_summary), in
-- experiment order.
SELECT run_id, host, experiment, points, target_rel, points_met, share_met, stopped_at_target, stopped_at_cap,
       fixed_count, median_achieved_rel, p90_achieved_rel, requeued, drifting_at_cap, sampling_s,
       experiment_wall_s
FROM precision_summary
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY run_id, host, experiment
