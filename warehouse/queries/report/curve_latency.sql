-- report/curve_latency: the latency curve a fleet or comparison overlays, of the runs in chosen_runs:
-- median ns per working set of one page policy per run (THP where the run has it, as the summary's levels), of
-- the fastest core kind where a host measured several (cpu_core_kinds; as the fleet's level columns). A
-- reference host's relative curve (ns over L1, tinymembench) is left out: its values are no absolute latency
-- to draw on the same axis as the others' (its own page draws it, labelled as what it is).
-- Columns of every curve_* query: run_id, host, point (what matches one run's point to another's), x, y.
SELECT c.run_id, c.host, c.working_set_bytes AS point, c.working_set_bytes AS x, c.median_ns AS y
FROM latency_curve AS c
JOIN runs AS r ON r.run_id = c.run_id AND r.host = c.host
LEFT JOIN cpu_core_kinds AS k ON k.run_id = c.run_id AND k.host = c.host AND k.cpu = c.cpu
WHERE (c.run_id, c.host) IN (FROM chosen_runs) AND c.median_ns > 0
  AND NOT coalesce(TRY_CAST(r.reference ->> '$.relative' AS BOOLEAN), false)
QUALIFY coalesce(k.kind_rank, 0) = min(coalesce(k.kind_rank, 0)) OVER (PARTITION BY c.run_id, c.host)
    AND c.page_policy IS NOT DISTINCT FROM
        first_value(c.page_policy) OVER (PARTITION BY c.run_id, c.host ORDER BY c.page_policy <> 'thp', c.page_policy)
ORDER BY c.run_id, c.host, x
