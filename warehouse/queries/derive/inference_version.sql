-- The method version a run's derived rows were computed with. Parameters: run_id, host.
SELECT inference_version FROM inference_runs WHERE run_id = ? AND host = ?
