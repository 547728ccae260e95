-- report/choose_runs: the runs the report's queries read next, as the temporary table chosen_runs that
-- each of them joins (a read-only warehouse allows temporary tables). Parameter: a JSON array of
-- {"run_id": ..., "host": ...} objects (one bound string: binding a list costs about 0.2 ms per element).
CREATE OR REPLACE TEMP TABLE chosen_runs AS
SELECT run_id, host
FROM (SELECT unnest(from_json(?, '[{"run_id": "VARCHAR", "host": "VARCHAR"}]'), recursive := true))
