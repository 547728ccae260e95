-- report/plan_vs_actual: each experiment of the batch's runs beside its plan (view plan_vs_actual), in the
-- order the experiments ran, those the plan priced but the run never recorded last.
SELECT p.*, e.run_order
FROM plan_vs_actual AS p
LEFT JOIN experiments AS e USING (run_id, host, experiment)
WHERE (p.run_id, p.host) IN (FROM chosen_runs)
ORDER BY e.run_order NULLS LAST, p.experiment
