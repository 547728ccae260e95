-- Every point of the run with its raw samples in order, its params, the L1 canary read before and after it
-- (NULL for kernels without one) and the tries its kernel took to settle it (context.tries; NULL before
-- kernels re-measured). A first attempt that was measured again after its sweep is left out.
-- Parameters: run_id, host.
SELECT
    p.experiment,
    p.point_index,
    p.unit,
    p.params,
    TRY_CAST(p.context ->> '$.canary_before_ns' AS DOUBLE)  AS canary_before_ns,
    TRY_CAST(p.context ->> '$.canary_after_ns' AS DOUBLE)   AS canary_after_ns,
    json_array_length(p.context -> '$.tries')               AS tries,
    flatten(list(s.sample_values ORDER BY s.first_index))   AS sample_values
FROM points AS p
JOIN point_samples AS s USING (run_id, host, experiment, point_index)
WHERE p.run_id = ? AND p.host = ?
  AND NOT coalesce(TRY_CAST(p.context ->> '$.precision.requeued' AS BOOLEAN), false)
GROUP BY ALL
ORDER BY p.experiment, p.point_index
