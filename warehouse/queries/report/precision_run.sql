-- report/precision_run: each chosen run's precision over all its points that stand (view precision_points,
-- final): how many, how many had a target and met it, the half-width reached (median, 90th percentile), the
-- points measured twice, and the distinct targets. A run without precision records has no row.
SELECT
    run_id,
    host,
    count(*) FILTER (WHERE final)                                   AS points,
    count(*) FILTER (WHERE final AND target_rel IS NOT NULL)        AS points_with_target,
    count(*) FILTER (WHERE final AND met_target)                    AS points_met,
    median(achieved_rel) FILTER (WHERE final)                       AS median_achieved_rel,
    quantile_cont(achieved_rel, 0.9) FILTER (WHERE final)           AS p90_achieved_rel,
    count(*) FILTER (WHERE requeued)                                AS requeued,
    list(DISTINCT target_rel ORDER BY target_rel) FILTER (WHERE target_rel IS NOT NULL) AS targets
FROM precision_points
WHERE (run_id, host) IN (FROM chosen_runs)
GROUP BY run_id, host
