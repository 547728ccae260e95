-- host_identity: who the host of each run is, for grouping and comparing: its inventory groups (NULL where
-- the bundle did not record them) and its CPU's microarchitecture, named by the table in the view
-- microarchitectures from the vendor / family / model (and stepping) on x86 or the implementer / part of
-- every core type on Arm ('Cortex-A76 + Cortex-A55' on a big.LITTLE SoC). A CPU the table lacks is named
-- 'unknown (...)' with the numbers that identify it, so hosts of one unknown CPU still group together.
CREATE OR REPLACE VIEW host_identity AS
WITH cpu AS (
    SELECT
        facts.run_id,
        facts.host,
        facts.facts ->> '$.cpu.model_name'                         AS cpu_model_name,
        facts.facts ->> '$.cpu.vendor'                             AS cpu_vendor,
        TRY_CAST(facts.facts ->> '$.cpu.family' AS INTEGER)        AS cpu_family,
        TRY_CAST(facts.facts ->> '$.cpu.model' AS INTEGER)         AS cpu_model,
        TRY_CAST(facts.facts ->> '$.cpu.stepping' AS INTEGER)      AS cpu_stepping,
        facts.facts ->> '$.cpu.implementer'                        AS cpu_implementer,
        TRY_CAST(facts.facts -> '$.cpu.parts' AS VARCHAR[])        AS cpu_parts
    FROM facts
),
x86 AS (
    SELECT cpu.run_id, cpu.host, m.name, m.cores, m.segment
    FROM cpu
    JOIN microarchitectures AS m
      ON m.vendor = cpu.cpu_vendor AND m.family = cpu.cpu_family
     AND cpu.cpu_model BETWEEN m.model_first AND m.model_last
     AND (m.stepping_first IS NULL OR cpu.cpu_stepping BETWEEN m.stepping_first AND m.stepping_last)
    -- a stepping range names the design more precisely than the row for the whole model
    QUALIFY row_number() OVER (PARTITION BY cpu.run_id, cpu.host ORDER BY m.stepping_first IS NULL) = 1
),
arm_parts AS (
    SELECT run_id, host, cpu_implementer, unnest(cpu_parts) AS part, generate_subscripts(cpu_parts, 1) AS position
    FROM cpu
    WHERE len(cpu_parts) > 0
),
arm AS (
    SELECT
        p.run_id,
        p.host,
        string_agg(coalesce(m.name, 'unknown (implementer ' || p.cpu_implementer || ', part ' || p.part || ')'),
                   ' + ' ORDER BY p.position)                      AS name,
        string_agg(coalesce(m.cores, '?'), ' + ' ORDER BY p.position) AS cores,
        min(m.segment)                                             AS segment,
        bool_and(m.name IS NOT NULL)                               AS known
    FROM arm_parts AS p
    LEFT JOIN microarchitectures AS m
      ON m.implementer = TRY_CAST(p.cpu_implementer AS INTEGER) AND m.part = TRY_CAST(p.part AS INTEGER)
    GROUP BY p.run_id, p.host
)
SELECT
    cpu.run_id,
    cpu.host,
    runs.inventory_groups,
    coalesce(x86.name, arm.name,
             CASE WHEN cpu.cpu_family IS NOT NULL AND cpu.cpu_model IS NOT NULL
                  THEN 'unknown (' || coalesce(cpu.cpu_vendor || ' ', '') || 'family ' || cpu.cpu_family
                       || ', model ' || cpu.cpu_model || ')'
                  ELSE 'unknown (no CPU family and model recorded)' END) AS microarchitecture,
    coalesce(x86.cores, arm.cores)                                 AS uarch_cores,
    coalesce(x86.segment, arm.segment)                             AS uarch_segment,
    x86.name IS NOT NULL OR coalesce(arm.known, false)             AS uarch_known,
    cpu.cpu_model_name,
    cpu.cpu_vendor,
    cpu.cpu_family,
    cpu.cpu_model,
    cpu.cpu_stepping,
    cpu.cpu_implementer,
    cpu.cpu_parts
FROM cpu
JOIN runs USING (run_id, host)
LEFT JOIN x86 USING (run_id, host)
LEFT JOIN arm USING (run_id, host);
