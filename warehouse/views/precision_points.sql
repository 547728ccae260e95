-- precision_points: how sure each measured point is. One row per point whose kernel recorded its
-- sampling (context.precision, from the kernels' sampler): the target it sampled to (NULL: a fixed
-- number of samples, the quick profile), the half-width of its median's CI95 relative to the median
-- that it reached, the samples it took, why it stopped (fixed, target, cap), the time cap and the time
-- it sampled, the trend across its samples (Mann-Kendall z, the move between the first and last thirds)
-- and the attempt. A first attempt that stopped at its cap while drifting (requeued) was measured again
-- after its sweep; the second attempt is the one that stands for the point (final).
CREATE OR REPLACE VIEW precision_points AS
WITH precision AS (
    SELECT
        run_id,
        host,
        experiment,
        point_index,
        kernel,
        metric,
        unit,
        summary_median,
        summary_ci95_low,
        summary_ci95_high,
        TRY_CAST(context ->> '$.precision.target_rel' AS DOUBLE)   AS target_rel,
        TRY_CAST(context ->> '$.precision.achieved_rel' AS DOUBLE) AS achieved_rel,
        TRY_CAST(context ->> '$.precision.samples' AS BIGINT)      AS samples,
        context ->> '$.precision.stop'                             AS stop,
        TRY_CAST(context ->> '$.precision.cap_s' AS DOUBLE)        AS cap_s,
        TRY_CAST(context ->> '$.precision.sampling_s' AS DOUBLE)   AS sampling_s,
        TRY_CAST(context ->> '$.precision.trend_z' AS DOUBLE)      AS trend_z,
        TRY_CAST(context ->> '$.precision.shift_rel' AS DOUBLE)    AS shift_rel,
        TRY_CAST(context ->> '$.precision.drift' AS BOOLEAN)       AS drift,
        TRY_CAST(context ->> '$.precision.attempt' AS INTEGER)     AS attempt,
        TRY_CAST(context ->> '$.precision.requeued' AS BOOLEAN)    AS requeued,
        TRY_CAST(context ->> '$.wall_s' AS DOUBLE)                 AS wall_s
    FROM points
    WHERE context ->> '$.precision.stop' IN ('fixed', 'target', 'cap')
)
SELECT
    run_id,
    host,
    experiment,
    point_index,
    kernel,
    metric,
    unit,
    summary_median    AS median,
    summary_ci95_low  AS ci95_low,
    summary_ci95_high AS ci95_high,
    target_rel,
    achieved_rel,
    -- Without a target there is nothing to meet; a half-width that could not be computed (median 0) did not.
    CASE WHEN target_rel IS NULL THEN NULL ELSE coalesce(achieved_rel <= target_rel, false) END AS met_target,
    samples,
    stop,
    cap_s,
    sampling_s,
    trend_z,
    shift_rel,
    drift,
    attempt,
    requeued,
    NOT coalesce(requeued, false) AS final,
    wall_s
FROM precision;
