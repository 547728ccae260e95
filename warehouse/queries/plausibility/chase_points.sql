-- Every single-chain, read-only, random-cycle chase at a 64 B stride of the experiments that measure one:
-- the latency sweep, zero_queue, write_cost's read walk, mlp at k = 1 and pattern_stride random x 64 B. One
-- working set and page policy should read alike in all of them. A first attempt that was measured again
-- after its sweep (precision.requeued) is left out: its second attempt stands for the point.
-- Parameters: run_id, host.
SELECT
    experiment,
    point_index,
    params ->> '$.level'                                  AS level,
    TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)  AS working_set_bytes,
    params ->> '$.page_policy'                            AS page_policy,
    summary_median,
    summary_ci95_low,
    summary_ci95_high,
    TRY_CAST(context ->> '$.canary_before_ns' AS DOUBLE)  AS canary_before_ns,
    TRY_CAST(context ->> '$.canary_after_ns' AS DOUBLE)   AS canary_after_ns
FROM points
WHERE run_id = ? AND host = ?
  AND experiment IN ('latency_sweep', 'zero_queue', 'write_cost', 'mlp', 'pattern_stride')
  AND metric = 'latency' AND unit = 'ns'
  AND (params ->> '$.pattern') = 'random_cycle'
  AND TRY_CAST(params ->> '$.stride_bytes' AS BIGINT) = 64
  AND coalesce(params ->> '$.walk', 'read') = 'read'
  AND coalesce(TRY_CAST(params ->> '$.chains' AS INTEGER), 1) = 1
  AND coalesce(TRY_CAST(params ->> '$.threads' AS INTEGER), 1) = 1  -- companions chasing alongside: a loaded chase
  AND TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT) > 0
  AND (params ->> '$.page_policy') IS NOT NULL
  AND NOT coalesce(TRY_CAST(context ->> '$.precision.requeued' AS BOOLEAN), false)
ORDER BY working_set_bytes, page_policy, experiment, point_index
