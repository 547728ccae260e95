-- One run's rows of a derived table. {table} is a name from fleetscope.analyze.derive.DERIVED (never data).
-- Parameters: run_id, host.
DELETE FROM {table} WHERE run_id = ? AND host = ?
