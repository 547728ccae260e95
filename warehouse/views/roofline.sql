-- roofline: each run's roofline, one row per ceiling or measured point. Compute ceilings (kind 'compute'):
-- peak_flops' GFLOP/s per class and precision on one core and on all cores. Memory ceilings (kind 'memory'):
-- GB/s per inferred level on one core (inferred_level_bandwidth: the best op of the fastest core kind's
-- single-thread sweep) and DRAM on all cores (thread_saturation's peak read). Measured points (kind
-- 'measured'): SAXPY (y = a*x + y on doubles, 2 FLOP per update) at each stride, one core, at its arithmetic
-- intensity: FLOP per byte moved, the bytes being the lines of x and y each sweep visits (saxpy_stride's
-- line_visits_per_pass) plus y's lines written back, one per y visit (24 B per update at stride 1; at a stride
-- of 8 elements or more, a line per element of each array). ridge_flop_per_byte: where a compute ceiling meets
-- the DRAM ceiling of the same scope (peak / bandwidth): below it, a kernel of that intensity is bound by memory.
CREATE OR REPLACE VIEW roofline AS
WITH level_bandwidth AS (
    SELECT b.run_id, b.host, b.level, max(b.bandwidth_gb_s) AS gb_s
    FROM inferred_level_bandwidth AS b
    LEFT JOIN cpu_core_kinds AS k ON k.run_id = b.run_id AND k.host = b.host AND k.cpu = b.cpu
    WHERE b.level IS NOT NULL AND b.bandwidth_gb_s > 0 AND coalesce(k.kind_rank, 0) = 0
    GROUP BY ALL
),
memory AS (
    SELECT run_id, host, 'one core' AS scope, level AS name, gb_s FROM level_bandwidth
    UNION ALL
    SELECT run_id, host, 'all cores', 'DRAM', max(peak_gb_s)
    FROM thread_saturation
    WHERE op = 'read' AND peak_gb_s > 0
    GROUP BY ALL
),
compute AS (
    SELECT f.run_id, f.host, f.class, f.precision, f.vector_bits, f.gflop_s,
           CASE WHEN f.threads = 1 THEN 'one core' ELSE 'all cores' END AS scope
    FROM peak_flops AS f
    WHERE f.gflop_s > 0
      AND (f.threads = 1 OR f.threads = (SELECT max(g.threads) FROM peak_flops AS g
                                         WHERE g.run_id = f.run_id AND g.host = f.host))
),
dram AS (
    SELECT run_id, host, scope, max(gb_s) AS gb_s FROM memory WHERE name = 'DRAM' GROUP BY ALL
)
SELECT c.run_id, c.host, 'compute' AS kind, c.scope, c.class || ' ' || c.precision AS name, c.class, c.precision,
       c.vector_bits, c.gflop_s, NULL::DOUBLE AS gb_s, NULL::DOUBLE AS flop_per_byte,
       c.gflop_s / d.gb_s AS ridge_flop_per_byte, NULL::INTEGER AS stride_elements
FROM compute AS c
LEFT JOIN dram AS d ON d.run_id = c.run_id AND d.host = c.host AND d.scope = c.scope
UNION ALL
SELECT run_id, host, 'memory', scope, name, NULL, NULL, NULL, NULL, gb_s, NULL, NULL, NULL
FROM memory
UNION ALL
SELECT s.run_id, s.host, 'measured', 'one core', 'SAXPY stride ' || s.stride_elements, NULL, 'fp64', 64,
       2.0 / s.ns_per_update, NULL,
       2.0 / (1.5 * s.line_visits_per_pass * 64 / (s.array_bytes / 8)), NULL, s.stride_elements
FROM saxpy_stride AS s
LEFT JOIN cpu_core_kinds AS k ON k.run_id = s.run_id AND k.host = s.host AND k.cpu = s.cpu
WHERE s.ns_per_update > 0 AND s.line_visits_per_pass > 0 AND s.array_bytes > 0 AND coalesce(k.kind_rank, 0) = 0;
