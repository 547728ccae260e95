-- c2c_llc_domains: core-to-core latency within vs across last-level-cache domains (the two CCDs of a Zen 3
-- socket, the clusters of a big.LITTLE part), one row per ordered pair of LLC domains of a host whose facts
-- (topology.cpus[].llc) show more than one: each c2c pair labelled by the domains of its two CPUs, SMT
-- siblings left out (they time their own core), summarised as the median of the pairs' medians.
CREATE OR REPLACE VIEW c2c_llc_domains AS
WITH cpus AS (
    SELECT
        run_id,
        host,
        unnest(from_json(facts -> '$.topology.cpus', '[{"cpu": "INTEGER", "llc": "VARCHAR", "node": "VARCHAR"}]')) AS cpu
    FROM facts
    WHERE json_type(facts -> '$.topology.cpus') = 'ARRAY'
),
domains AS (
    SELECT run_id, host, cpu.cpu AS cpu, cpu.llc AS llc, cpu.node AS node,
           min(cpu.cpu) OVER (PARTITION BY run_id, host, cpu.llc) AS llc_first_cpu,
           count(DISTINCT cpu.llc) OVER (PARTITION BY run_id, host) AS llc_domains
    FROM cpus
    WHERE cpu.llc IS NOT NULL
)
SELECT
    m.run_id,
    m.host,
    a.llc                                     AS llc_domain_a,
    b.llc                                     AS llc_domain_b,
    a.llc_first_cpu                           AS first_cpu_a,
    b.llc_first_cpu                           AS first_cpu_b,
    a.llc = b.llc                             AS same_domain,
    bool_and(a.node IS NOT DISTINCT FROM b.node) AS same_node,
    count(*)                                  AS pairs,
    median(m.median_ns)                       AS median_ns,
    min(m.min_ns)                             AS min_ns,
    max(m.median_ns)                          AS max_ns,
    any_value(a.llc_domains)                  AS llc_domains
FROM c2c_matrix AS m
JOIN domains AS a ON a.run_id = m.run_id AND a.host = m.host AND a.cpu = m.cpu_a
JOIN domains AS b ON b.run_id = m.run_id AND b.host = m.host AND b.cpu = m.cpu_b
WHERE a.llc_domains > 1 AND m.median_ns IS NOT NULL AND NOT coalesce(m.smt_siblings, false)
GROUP BY m.run_id, m.host, a.llc, b.llc, a.llc_first_cpu, b.llc_first_cpu;
