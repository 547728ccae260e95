-- roofline_curve: each run's roofline as a curve, per scope (one core, all cores): min(peak, bandwidth x
-- intensity) at whole powers of two from 1/64 to 64 FLOP per byte and at the ridge, from the scope's ceilings
-- in view roofline (the highest FP64 compute ceiling and the DRAM memory ceiling). A run and scope without both
-- ceilings has no curve. The comparison pages overlay it (queries report/curve_roofline_<scope>).
CREATE OR REPLACE VIEW roofline_curve AS
WITH ceilings AS (
    SELECT run_id, host, scope,
           max(gflop_s) FILTER (WHERE kind = 'compute' AND precision = 'fp64')        AS peak_gflop_s,
           max(gb_s) FILTER (WHERE kind = 'memory' AND name = 'DRAM')                AS dram_gb_s
    FROM roofline
    GROUP BY ALL
    HAVING peak_gflop_s > 0 AND dram_gb_s > 0
),
intensities AS (
    SELECT exponent::VARCHAR AS point, pow(2.0, exponent) AS x FROM range(-6, 7) AS t(exponent)
)
SELECT c.run_id, c.host, c.scope, i.point, i.x, least(c.peak_gflop_s, c.dram_gb_s * i.x) AS y
FROM ceilings AS c, intensities AS i
UNION ALL
SELECT run_id, host, scope, 'ridge', peak_gflop_s / dram_gb_s, peak_gflop_s
FROM ceilings
