-- plan_vs_actual: each experiment of a planned run beside what it did. The plan (plan_experiments, made
-- before measuring by roles/kernels/tasks/plan.yml) gave the points the experiment would write, the
-- processes it would start and an upper bound on its time, fitted into the profile's allowance (what the
-- budget cut in plan_cuts, what else the plan says in plan_notes); the run recorded its status, the points loaded and its wall time (experiments).
-- actual_share is wall time / planned bound; overshoot is true when the run took more than 25% past its
-- price (the plan's model of this host did not hold: a slower or busier host than its rates; flag
-- plan_overshoot). An experiment the run recorded but the plan did not price (mlc, workloads, the opt-in
-- prefetch_hw_off, priced inside prefetch) has NULL plan columns; only runs that carry a plan are listed.
CREATE OR REPLACE VIEW plan_vs_actual AS
WITH planned_runs AS (
    SELECT run_id, host FROM runs WHERE plan_bound_s IS NOT NULL
)
SELECT
    coalesce(p.run_id, e.run_id)          AS run_id,
    coalesce(p.host, e.host)              AS host,
    coalesce(p.experiment, e.experiment)  AS experiment,
    e.status,
    p.points                              AS planned_points,
    e.point_count                         AS points,
    p.processes                           AS planned_processes,
    p.bound_s                             AS planned_s,
    e.wall_s                              AS actual_s,
    e.wall_s / nullif(p.bound_s, 0)       AS actual_share,
    p.allowance_s,
    p.target_rel,
    p.cap_s,
    p.kinds,
    p.skip                                AS planned_skip,
    p.notes                               AS plan_notes,
    p.cuts                                AS plan_cuts,
    coalesce(e.wall_s > 1.25 * p.bound_s, false) AS overshoot
FROM plan_experiments AS p
FULL OUTER JOIN experiments AS e
    ON e.run_id = p.run_id AND e.host = p.host AND e.experiment = p.experiment
WHERE (coalesce(p.run_id, e.run_id), coalesce(p.host, e.host)) IN (SELECT (run_id, host) FROM planned_runs);
