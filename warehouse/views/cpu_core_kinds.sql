-- cpu_core_kinds: each CPU of each run's host with its core kind, from the facts (topology.cpus and
-- topology.core_kinds, roles/facts): kind_rank 0 is the fastest kind (the only one on a homogeneous
-- host). Points carry the CPU they were pinned to (params.cpu); joined here they say which kind they
-- measured. Facts from before topology was recorded have no rows (their points count as rank 0).
CREATE OR REPLACE VIEW cpu_core_kinds AS
WITH kinds AS (
    SELECT
        run_id,
        host,
        unnest(from_json(facts -> '$.topology.core_kinds',
                         '[{"kind": "VARCHAR", "cpus": "VARCHAR", "representative_cpu": "INTEGER"}]')) AS kind,
        generate_subscripts(from_json(facts -> '$.topology.core_kinds', '["JSON"]'), 1) - 1 AS kind_rank,
        json_array_length(facts -> '$.topology.core_kinds')                                 AS kinds_on_host
    FROM facts
    WHERE json_type(facts -> '$.topology.core_kinds') = 'ARRAY'
),
cpus AS (
    SELECT
        run_id,
        host,
        unnest(from_json(facts -> '$.topology.cpus', '[{"cpu": "INTEGER", "kind": "VARCHAR"}]')) AS cpu
    FROM facts
    WHERE json_type(facts -> '$.topology.cpus') = 'ARRAY'
)
SELECT
    c.run_id,
    c.host,
    c.cpu.cpu                                  AS cpu,
    c.cpu.kind                                 AS core_kind,
    k.kind_rank,
    k.kinds_on_host,
    k.kind.representative_cpu = c.cpu.cpu      AS representative
FROM cpus AS c
JOIN kinds AS k ON k.run_id = c.run_id AND k.host = c.host AND k.kind.kind = c.cpu.kind;
