-- The perf outputs of one run's workloads: each perf stat (tool perf) and perf report (tool perf_report) that
-- a workload kept or `fleetscope import perf` brought (experiment 'perf' for imports before migration 017),
-- with what the role or import said of it (params: workload, status, failure, miss_note) and what the
-- parser read. Parameters: run_id, host.
SELECT experiment, path, tool, params, parsed
FROM raw_outputs
WHERE run_id = ? AND host = ?
  AND experiment IN ('workloads', 'perf')
  AND tool IN ('perf', 'perf_report')
ORDER BY experiment, path
