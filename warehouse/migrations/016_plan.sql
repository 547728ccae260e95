-- 016: the plan and its price (issue 29): before measuring, each host's run planned every experiment's points
-- and an upper bound on their time (roles/kernels/tasks/plan.yml, plugins/filter/plan.py), fitted into the
-- profile's budget; the manifest keeps it (`plan`). runs gets the totals, plan_experiments one row per
-- planned experiment (notes: what the plan says of it; cuts: what the budget cut, each joined with "; ");
-- view plan_vs_actual sets each beside what the run measured. Runs from before have
-- no plan: NULL totals, no rows.
ALTER TABLE runs ADD COLUMN plan_budget_s DOUBLE;
ALTER TABLE runs ADD COLUMN plan_bound_s DOUBLE;
ALTER TABLE runs ADD COLUMN plan_points INTEGER;

CREATE TABLE plan_experiments (
    run_id      VARCHAR NOT NULL,
    host        VARCHAR NOT NULL,
    experiment  VARCHAR NOT NULL,
    points      INTEGER NOT NULL,
    processes   INTEGER NOT NULL,
    bound_s     DOUBLE NOT NULL,
    allowance_s DOUBLE,
    target_rel  DOUBLE,
    cap_s       DOUBLE,
    kinds       INTEGER,
    skip        VARCHAR,
    notes       VARCHAR,
    cuts        VARCHAR,
    PRIMARY KEY (run_id, host, experiment)
);
