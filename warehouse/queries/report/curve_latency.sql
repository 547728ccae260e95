-- report/curve_latency: the latency curve a fleet or comparison overlays, of the runs in chosen_runs:
-- median ns per working set of one page policy per run (THP where the run has it, as the summary's levels).
-- Columns of every curve_* query: run_id, host, point (what matches one run's point to another's), x, y.
SELECT run_id, host, working_set_bytes AS point, working_set_bytes AS x, median_ns AS y
FROM latency_curve
WHERE (run_id, host) IN (FROM chosen_runs) AND median_ns > 0
QUALIFY page_policy IS NOT DISTINCT FROM
        first_value(page_policy) OVER (PARTITION BY run_id, host ORDER BY page_policy <> 'thp', page_policy)
ORDER BY run_id, host, x
