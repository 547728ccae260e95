-- What the warehouse holds of the runs a batch of bundle folders names (?: a JSON list of {run_id, host}):
-- each held run's folder and content hash, the method version its derived rows were computed with, and the
-- signature of its folder's files when it was read (bundle_signatures; NULL where none was kept).
WITH asked AS (
    SELECT unnest(from_json(?, '[{"run_id": "VARCHAR", "host": "VARCHAR"}]'), recursive := true)
)
SELECT r.run_id, r.host, r.bundle_path, r.content_sha256, i.inference_version,
       s.bundle_path AS signed_path, s.signature, s.content_sha256 AS signed_content_sha256
FROM asked AS a
JOIN runs AS r ON r.run_id = a.run_id AND r.host = a.host
LEFT JOIN inference_runs AS i ON i.run_id = r.run_id AND i.host = r.host
LEFT JOIN bundle_signatures AS s ON s.run_id = r.run_id AND s.host = r.host
