-- The signatures of a batch's folders as they were read (?: a JSON list of {run_id, host, bundle_path,
-- signature, content_sha256}); a later signature of the same run replaces the one kept.
INSERT OR REPLACE INTO bundle_signatures (run_id, host, bundle_path, signature, content_sha256)
SELECT run_id, host, bundle_path, signature, content_sha256
FROM (SELECT unnest(from_json(?, '[{"run_id": "VARCHAR", "host": "VARCHAR", "bundle_path": "VARCHAR",
                                    "signature": "VARCHAR", "content_sha256": "VARCHAR"}]'), recursive := true))
