-- The content hash of the loaded bundle of a run, if any (?: run_id, host).
SELECT content_sha256 FROM runs WHERE run_id = ? AND host = ?
