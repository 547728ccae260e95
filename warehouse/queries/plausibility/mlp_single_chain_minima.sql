-- mlp's k = 1 chase: working set and fastest ns per access. Parameters: run_id, host.
SELECT working_set_bytes, min_ns_per_access FROM mlp_curve WHERE run_id = ? AND host = ? AND chains = 1
