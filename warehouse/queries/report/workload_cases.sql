-- report/workload_cases: each workload's case in words (evidence, next step, what was not decided, what else the
-- numbers say, the profiles' sample-count rule), of a batch of runs (the runs in chosen_runs), the reference
-- workload first.
SELECT run_id, host, workload, classification, evidence, next_step, undecided, noticed, time_rule, miss_rule,
       miss_note
FROM workload_profile
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY NOT reference, workload
