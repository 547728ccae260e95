-- report/run_facts: the verbatim facts JSON and the typed facts of a batch of runs (the runs in chosen_runs).
SELECT f.facts, h.*
FROM facts AS f
JOIN host_facts AS h USING (run_id, host)
WHERE (f.run_id, f.host) IN (FROM chosen_runs)
