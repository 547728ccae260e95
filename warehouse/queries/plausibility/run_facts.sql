-- The run's facts document. Parameters: run_id, host.
SELECT facts FROM facts WHERE run_id = ? AND host = ?
