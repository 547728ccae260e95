-- report/c2c_llc_domains: c2c latency per pair of LLC domains for a batch of runs (the runs in chosen_runs).
SELECT *
FROM c2c_llc_domains
WHERE (run_id, host) IN (FROM chosen_runs)
ORDER BY first_cpu_a, first_cpu_b
