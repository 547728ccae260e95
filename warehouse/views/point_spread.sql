-- point_spread: the mean and sample standard deviation of each point's raw samples (point_samples), the
-- mean ± std every lab report states, beside the median and CI95 the views give. std is NULL for a point of
-- one sample. The kernels' own mean is points.summary_mean; this one is recomputed from the kept samples.
CREATE OR REPLACE VIEW point_spread AS
SELECT
    run_id,
    host,
    experiment,
    point_index,
    count(*)             AS samples,
    avg(sample)          AS mean,
    stddev_samp(sample)  AS std
FROM (
    SELECT run_id, host, experiment, point_index, unnest(sample_values) AS sample
    FROM point_samples
)
GROUP BY run_id, host, experiment, point_index;
