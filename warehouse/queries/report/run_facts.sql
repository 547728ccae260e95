-- report/run_facts: the verbatim facts JSON, the typed facts and the host's identity (inventory groups,
-- microarchitecture) of a batch of runs (the runs in chosen_runs).
SELECT f.facts, h.*, i.inventory_groups, i.microarchitecture, i.uarch_cores, i.uarch_segment, i.uarch_known,
       i.cpu_stepping, i.cpu_implementer, i.cpu_parts
FROM facts AS f
JOIN host_facts AS h USING (run_id, host)
JOIN host_identity AS i USING (run_id, host)
WHERE (f.run_id, f.host) IN (FROM chosen_runs)
