-- report/curve_roofline_one_core: the one core roofline a comparison overlays, of the runs in chosen_runs (columns
-- as report/curve_latency): min(peak, bandwidth x intensity) at whole powers of two from 1/64 to 64 FLOP per
-- byte and at the ridge, with the one core ceilings of view roofline: the highest FP64 compute ceiling and the
-- DRAM memory ceiling. A run without both has no curve.
WITH ceilings AS (
    SELECT run_id, host,
           max(gflop_s) FILTER (WHERE kind = 'compute' AND precision = 'fp64')        AS peak_gflop_s,
           max(gb_s) FILTER (WHERE kind = 'memory' AND name = 'DRAM')                AS dram_gb_s
    FROM roofline
    WHERE (run_id, host) IN (FROM chosen_runs) AND scope = 'one core'
    GROUP BY ALL
    HAVING peak_gflop_s > 0 AND dram_gb_s > 0
),
intensities AS (
    SELECT exponent::VARCHAR AS point, pow(2.0, exponent) AS x FROM range(-6, 7) AS t(exponent)
)
SELECT c.run_id, c.host, i.point, i.x, least(c.peak_gflop_s, c.dram_gb_s * i.x) AS y
FROM ceilings AS c, intensities AS i
UNION ALL
SELECT run_id, host, 'ridge', peak_gflop_s / dram_gb_s, peak_gflop_s
FROM ceilings
ORDER BY run_id, host, x
