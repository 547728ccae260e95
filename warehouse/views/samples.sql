-- samples: every raw sample of every point, one row each (PerfKitBenchmarker's long format), unnested
-- from point_samples; join points on (run_id, host, experiment, point_index) for the point's kernel,
-- metric, unit and params.
CREATE OR REPLACE VIEW samples AS
SELECT
    run_id,
    host,
    experiment,
    point_index,
    (first_index + unnest(range(len(sample_values))))::INTEGER AS sample_index,
    unnest(sample_values)                                      AS value
FROM point_samples
