-- The derived rows of some runs, taken out again when one of them does not fit the table. {table} is a name from
-- fleetscope.analyze.derive.DERIVED_TABLES (never data); the text goes through str.format, so its own braces are
-- doubled. ?: a JSON list of objects with run_id and host.
DELETE FROM {table} AS t
WHERE EXISTS (
    SELECT 1
    FROM (SELECT unnest(from_json(?, '[{{"run_id": "VARCHAR", "host": "VARCHAR"}}]'), recursive := true)) AS k
    WHERE k.run_id = t.run_id AND k.host = t.host
)
