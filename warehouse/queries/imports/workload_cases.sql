-- The cases ingest read from an imported run's perf outputs, for `fleetscope import perf` to print.
-- Parameters: run_id, host.
SELECT workload, counter_tier, classification, evidence, next_step, undecided, noticed, time_rule, miss_rule,
       miss_note
FROM workload_cases
WHERE run_id = ? AND host = ?
ORDER BY workload
