-- A batch of samples (?: a JSON list of chunks): each chunk holds consecutive samples of one point of one
-- run, the first of them at first_index.
INSERT INTO point_samples (run_id, host, experiment, point_index, first_index, sample_values)
SELECT chunk.run_id, chunk.host, chunk.experiment, chunk.point_index, chunk.first_index, chunk.sample_values
FROM (
    SELECT unnest(from_json(?, '[{"run_id": "VARCHAR", "host": "VARCHAR", "experiment": "VARCHAR",
                                  "point_index": "INTEGER", "first_index": "INTEGER", "sample_values": "DOUBLE[]"}]')) AS chunk
)
