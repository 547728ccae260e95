-- 013: a relative curve's levels are no absolute latency (issue 28). tinymembench prints the extra ns over an L1
-- hit, so a reference host's relative curve gives each level's latency over L1, not its load-to-use latency:
-- latency_over_l1_ns holds it and latency_ns (and latency_cycles) stay NULL for such a run, so no page, fleet
-- column or comparison can read it as an absolute latency. Rows inferred before move over here.
ALTER TABLE inferred_levels ADD COLUMN latency_over_l1_ns DOUBLE;
UPDATE inferred_levels AS l
SET latency_over_l1_ns = l.latency_ns, latency_ns = NULL, latency_cycles = NULL
FROM runs AS r
WHERE r.run_id = l.run_id AND r.host = l.host AND coalesce(TRY_CAST(r.reference ->> '$.relative' AS BOOLEAN), false);
