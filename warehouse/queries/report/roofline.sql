-- report/roofline: the roofline's ceilings and measured points, of a batch of runs (the runs in chosen_runs):
-- compute ceilings (highest first), memory ceilings (fastest level first), then the measured points by stride.
SELECT *
FROM roofline
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY CASE kind WHEN 'compute' THEN 0 WHEN 'memory' THEN 1 ELSE 2 END, scope DESC,
         coalesce(gflop_s, 0) * (kind = 'compute')::INTEGER DESC, gb_s DESC, stride_elements
