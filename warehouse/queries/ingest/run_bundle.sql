-- The folder and the content hash of the loaded bundle of a run, if any (?: run_id, host).
SELECT bundle_path, content_sha256 FROM runs WHERE run_id = ? AND host = ?
