-- peak_flops: peak floating-point throughput, one row per instruction class (vector width), precision (fp64,
-- fp32) and thread count (one pinned thread per physical core: 1, the fastest core kind's cores on a host with
-- more than one, all). gflop_s: the median window of the threads' GFLOP/s together (a multiply-add is 2 FLOP
-- per lane, fused or not; rates per ns of each thread's CPU time); clock_ghz: the clock under the same class
-- measured in the windows between (core_clock's ruler); flop_per_cycle_per_core = gflop_s / threads /
-- clock_ghz: a shortfall with full FLOP/cycle is the clock's, with few FLOP/cycle the core's. fma_latency_cycles:
-- one dependent chain's cycles per multiply-add; chains_needed = latency x multiply-adds per cycle, the
-- independent chains that hide it (the kernel runs `chains`; chains_cover_latency says whether that was enough).
-- package_watts and joules_per_gflop (point_energy) where the host exposes RAPL.
CREATE OR REPLACE VIEW peak_flops AS
SELECT
    p.run_id,
    p.host,
    p.point_index,
    p.params ->> '$.class'                                                    AS class,
    p.params ->> '$.operation'                                                AS operation,
    TRY_CAST(p.params ->> '$.fused' AS BOOLEAN)                               AS fused,
    TRY_CAST(p.params ->> '$.vector_bits' AS INTEGER)                         AS vector_bits,
    p.params ->> '$.precision'                                                AS precision,
    TRY_CAST(p.params ->> '$.lanes' AS INTEGER)                               AS lanes,
    TRY_CAST(p.params ->> '$.threads' AS INTEGER)                             AS threads,
    p.params ->> '$.cpus'                                                     AS cpus,
    p.summary_median                                                          AS gflop_s,
    p.summary_ci95_low                                                        AS ci95_low_gflop_s,
    p.summary_ci95_high                                                       AS ci95_high_gflop_s,
    p.summary_median / TRY_CAST(p.params ->> '$.threads' AS INTEGER)          AS gflop_s_per_core,
    TRY_CAST(p.context ->> '$.clock_ghz' AS DOUBLE)                           AS clock_ghz,
    TRY_CAST(p.context ->> '$.flop_per_cycle_per_core' AS DOUBLE)             AS flop_per_cycle_per_core,
    TRY_CAST(p.context ->> '$.fma_latency_cycles' AS DOUBLE)                  AS fma_latency_cycles,
    TRY_CAST(p.params ->> '$.chains' AS INTEGER)                              AS chains,
    TRY_CAST(p.context ->> '$.chains_needed' AS DOUBLE)                       AS chains_needed,
    TRY_CAST(p.context ->> '$.chains_cover_latency' AS BOOLEAN)               AS chains_cover_latency,
    TRY_CAST(p.context ->> '$.min_cpu_share' AS DOUBLE)                       AS min_cpu_share,
    p.summary_count                                                           AS windows,
    e.package_watts,
    e.joules_per_gflop,
    e.temperature_before_c,
    e.temperature_after_c,
    e.throttled
FROM points AS p
LEFT JOIN point_energy AS e
  ON e.run_id = p.run_id AND e.host = p.host AND e.experiment = p.experiment AND e.point_index = p.point_index
WHERE p.experiment = 'peak_flops' AND p.metric = 'peak_flops' AND p.unit = 'GFLOP/s';
