-- MLP(k) per working set. Parameters: run_id, host.
SELECT working_set_bytes, chains, mlp FROM mlp_curve WHERE run_id = ? AND host = ?
