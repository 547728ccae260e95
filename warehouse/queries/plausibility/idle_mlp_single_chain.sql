-- mlp's k = 1 ns per access. Parameters: run_id, host.
SELECT min(ns_per_access) FROM mlp_curve WHERE run_id = ? AND host = ? AND chains = 1
