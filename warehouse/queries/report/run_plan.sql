-- report/run_plan: the plan's totals of the batch's runs (NULL for a run collected before runs were priced).
SELECT run_id, host, plan_budget_s, plan_bound_s, plan_points
FROM runs
WHERE (run_id, host) IN (FROM chosen_runs)
