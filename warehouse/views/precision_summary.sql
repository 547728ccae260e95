-- precision_summary: how sure a run is, per experiment. Over the points that stand (precision_points
-- final: a re-queued first attempt is replaced by its second): how many, the target (NULL for fixed
-- counts), the share that met it, how many stopped at the target, at the time cap or after a fixed
-- count, the median and 90th percentile of the CI95 half-width reached (relative to the median), the
-- points measured twice, and the time: seconds spent sampling summed over every attempt's records
-- (a tlb pair's or a thread team's records share one sampling), and the experiment's wall time as the
-- host recorded it (set-up included).
CREATE OR REPLACE VIEW precision_summary AS
SELECT
    p.run_id,
    p.host,
    p.experiment,
    count(*) FILTER (WHERE p.final)                                       AS points,
    max(p.target_rel)                                                     AS target_rel,
    count(*) FILTER (WHERE p.final AND p.met_target)                      AS points_met,
    count(*) FILTER (WHERE p.final AND p.met_target)::DOUBLE
        / nullif(count(*) FILTER (WHERE p.final AND p.target_rel IS NOT NULL), 0) AS share_met,
    count(*) FILTER (WHERE p.final AND p.stop = 'target')                 AS stopped_at_target,
    count(*) FILTER (WHERE p.final AND p.stop = 'cap')                    AS stopped_at_cap,
    count(*) FILTER (WHERE p.final AND p.stop = 'fixed')                  AS fixed_count,
    median(p.achieved_rel) FILTER (WHERE p.final)                         AS median_achieved_rel,
    quantile_cont(p.achieved_rel, 0.9) FILTER (WHERE p.final)             AS p90_achieved_rel,
    count(*) FILTER (WHERE p.requeued)                                    AS requeued,
    count(*) FILTER (WHERE p.final AND p.drift AND p.stop = 'cap')        AS drifting_at_cap,
    sum(p.sampling_s)                                                     AS sampling_s,
    any_value(e.wall_s)                                                   AS experiment_wall_s
FROM precision_points AS p
LEFT JOIN experiments AS e USING (run_id, host, experiment)
GROUP BY p.run_id, p.host, p.experiment;
