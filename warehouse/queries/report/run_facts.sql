-- report/run_facts: the verbatim facts JSON and the typed facts of a batch of runs (their run_ids, their
-- hosts).
SELECT f.facts, h.*
FROM facts AS f
JOIN host_facts AS h USING (run_id, host)
WHERE list_contains(?, f.run_id) AND list_contains(?, f.host)
