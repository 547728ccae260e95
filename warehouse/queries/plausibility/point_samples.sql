-- Every point of the run with what its own samples say of it: the count, median and MAD (median absolute
-- deviation), and the widest gap between consecutive sorted samples that leaves each side at least `side`
-- samples (side = max(2, ceil(min_share x count)); the first such gap of equals), with each side's median
-- and MAD - the inputs of plausibility's noise rules, computed here so a point of millions of samples costs
-- no Python list. Also its params, the L1 canary read before and after it (NULL for kernels without one)
-- and the tries its kernel took to settle it (context.tries; NULL before kernels re-measured). A first
-- attempt that was measured again after its sweep is left out. A point of more than max_split_samples is
-- not searched for two groups (split_checked false). Parameters: run_id, host, min_share, max_split_samples.
WITH stand AS (
    SELECT
        experiment,
        point_index,
        unit,
        params,
        TRY_CAST(context ->> '$.canary_before_ns' AS DOUBLE)  AS canary_before_ns,
        TRY_CAST(context ->> '$.canary_after_ns' AS DOUBLE)   AS canary_after_ns,
        json_array_length(context -> '$.tries')               AS tries
    FROM points
    WHERE run_id = $1 AND host = $2
      AND NOT coalesce(TRY_CAST(context ->> '$.precision.requeued' AS BOOLEAN), false)
),
spread AS (
    SELECT experiment, point_index, count(*) AS n, median(value)::DOUBLE AS median, mad(value)::DOUBLE AS mad
    FROM samples
    WHERE run_id = $1 AND host = $2
    GROUP BY experiment, point_index
),
sorted AS (
    -- one sorted list per point of at most $4 samples (the kernels' sampler takes at most 100 000): the gap
    -- search needs them in order, and a list of them costs its 8 bytes a sample
    SELECT experiment, point_index, list_sort(flatten(list(sample_values ORDER BY first_index))) AS values
    FROM point_samples
    WHERE run_id = $1 AND host = $2
      AND (experiment, point_index) IN (SELECT (experiment, point_index) FROM spread WHERE n <= $4)
    GROUP BY experiment, point_index
),
gaps AS (
    -- gaps[k] is the gap below the (side + k)-th sample (1-based), for every split leaving side each way
    SELECT experiment, point_index, values, len(values) AS n, side,
           CASE WHEN len(values) >= 2 * side
                THEN list_transform(range(side, len(values) - side + 1), lambda i: values[i + 1] - values[i])
           END AS gaps
    FROM (SELECT *, greatest(2, ceil($3 * len(values)))::BIGINT AS side FROM sorted)
),
widest AS (
    -- split: the samples below the widest gap, the first of equals
    SELECT *, list_max(gaps) AS gap, side + list_position(gaps, list_max(gaps)) - 1 AS split
    FROM gaps
),
sides AS (
    SELECT *,
           list_aggregate(values[1:split], 'median')::DOUBLE       AS lower_median,
           list_aggregate(values[split + 1:n], 'median')::DOUBLE   AS upper_median
    FROM widest
),
measured AS (
    SELECT experiment, point_index, gap, lower_median, upper_median,
           greatest(list_aggregate(list_transform(values[1:split], lambda x: abs(x - lower_median)), 'median'),
                    list_aggregate(list_transform(values[split + 1:n], lambda x: abs(x - upper_median)), 'median')
           )::DOUBLE AS group_mad
    FROM sides
)
SELECT
    p.experiment,
    p.point_index,
    p.unit,
    p.params,
    p.canary_before_ns,
    p.canary_after_ns,
    p.tries,
    d.n,
    d.median,
    d.mad,
    d.n <= $4 AS split_checked,
    m.gap,
    m.lower_median,
    m.upper_median,
    m.group_mad
FROM stand AS p
JOIN spread AS d USING (experiment, point_index)
LEFT JOIN measured AS m USING (experiment, point_index)
ORDER BY p.experiment, p.point_index
