-- One row per host: its latest run, CPU model and microarchitecture (vendor family/model), VM or not.
SELECT l.host, l.run_id, l.started_at, f.cpu_model_name,
       f.cpu_vendor || ' family ' || f.cpu_family || ' model ' || f.cpu_model AS microarchitecture,
       f.virtualization
FROM latest_runs l
LEFT JOIN host_facts f USING (run_id, host)
ORDER BY l.host
