-- A batch's runs' rows of one table, before the batch's rows replace them. {table} is a name from
-- fleetscope.ingest.load.RUN_TABLES or DERIVED_TABLES (never data);
-- the text goes through str.format, so its own braces are doubled. ?: a JSON list of objects with run_id and host.
DELETE FROM {table} AS t
WHERE EXISTS (
    SELECT 1
    FROM (SELECT unnest(from_json(?, '[{{"run_id": "VARCHAR", "host": "VARCHAR"}}]'), recursive := true)) AS k
    WHERE k.run_id = t.run_id AND k.host = t.host
)
