-- compute_figures: each run's compute headline figures, one row per run that measured core_clock or peak_flops:
-- the integer clock (core_clock's scalar_int class) with one core active and with the most cores active, and
-- peak_flops' widest FP64 class (of two as wide, e.g. SSE2 and 128-bit FMA, the faster) on one core and on the
-- most threads measured, with its FLOP per cycle per core. View host_headlines shows it for each host's latest
-- run and query report/compute_headline for a batch of runs: one definition of "the widest class" for both.
CREATE OR REPLACE VIEW compute_figures AS
WITH clock AS (
    SELECT run_id, host,
           max(clock_ghz) FILTER (WHERE active_cores = 1)                  AS clock_1_core_ghz,
           arg_max(clock_ghz, active_cores)                                AS clock_all_cores_ghz,
           max(active_cores)                                               AS clock_cores
    FROM core_clock_curve
    WHERE class = 'scalar_int'
    GROUP BY ALL
),
widest AS (
    SELECT run_id, host, arg_max(class, [vector_bits::DOUBLE, gflop_s]) AS class, max(vector_bits) AS vector_bits
    FROM peak_flops
    WHERE precision = 'fp64'
    GROUP BY ALL
),
flops AS (
    SELECT f.run_id, f.host, w.class AS flops_class, w.vector_bits AS flops_vector_bits,
           max(f.gflop_s) FILTER (WHERE f.threads = 1)                     AS fp64_1_core_gflop_s,
           arg_max(f.gflop_s, f.threads)                                   AS fp64_all_cores_gflop_s,
           max(f.threads)                                                  AS flops_cores,
           max(f.flop_per_cycle_per_core) FILTER (WHERE f.threads = 1)     AS fp64_flop_per_cycle
    FROM peak_flops AS f
    JOIN widest AS w ON w.run_id = f.run_id AND w.host = f.host AND w.class = f.class
    WHERE f.precision = 'fp64'
    GROUP BY ALL
)
SELECT coalesce(c.run_id, f.run_id) AS run_id, coalesce(c.host, f.host) AS host, c.clock_1_core_ghz,
       c.clock_all_cores_ghz, c.clock_cores, f.flops_class, f.flops_vector_bits, f.fp64_1_core_gflop_s,
       f.fp64_all_cores_gflop_s, f.flops_cores, f.fp64_flop_per_cycle
FROM clock AS c
FULL JOIN flops AS f ON f.run_id = c.run_id AND f.host = c.host
