-- A derive query asked for every run of a batch at once (fleetscope.analyze.batch_rows): the query as written
-- goes in the body's place, its run_id and host parameters replaced by __batch's columns; the order within a run
-- is row_number() over the query's own ORDER BY (0 without one), and the keys' marker becomes the number of the
-- last parameter, a JSON list of {run_id, host}: the batch's runs. Each run's rows come in the query's order.
SELECT __batch.run_id AS __run_id, __batch.host AS __host, __rows.*
FROM (
    SELECT unnest(from_json($/*keys*/, '[{"run_id": "VARCHAR", "host": "VARCHAR"}]'), recursive := true)
) AS __batch,
LATERAL (SELECT *, /*within*/ AS __order FROM (
/*body*/
)) AS __rows
ORDER BY __run_id, __host, __order
