-- A batch's staged rows of one table into the warehouse. {table} is a name from RUN_TABLES or DERIVED_TABLES,
-- {staged} the stage's table of that name (never data);
-- the text goes through str.format, so its own braces are doubled. ?: a JSON list of objects with run_id and host: the runs to take.
INSERT INTO {table} BY NAME
SELECT s.*
FROM {staged} AS s
WHERE EXISTS (
    SELECT 1
    FROM (SELECT unnest(from_json(?, '[{{"run_id": "VARCHAR", "host": "VARCHAR"}}]'), recursive := true)) AS k
    WHERE k.run_id = s.run_id AND k.host = s.host
)
