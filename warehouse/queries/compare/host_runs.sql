-- Every run of one host, oldest first. Parameters: host.
SELECT run_id, started_at, profile, status FROM runs_overview WHERE host = ? ORDER BY started_at, run_id
