-- core_clock_curve: the core clock under load, one row per instruction class (class: scalar_int, the
-- integer ruler alone; fma128, fma256, fma512, sse2 on x86; neon, sve on AArch64; scalar_fma elsewhere) and
-- number of active cores (one pinned thread per physical core, fastest core kind first). clock_ghz: the
-- median window's median over the threads, each thread's clock being dependent adds per ns of its own CPU
-- time; slowest_thread_ghz / fastest_thread_ghz: the threads' medians; min_cpu_share: the least share of a
-- window a thread ran (below 1: other work shared its CPU; its clock is still its own). vs_one_core: the
-- clock / the same class's one-core clock (the turbo curve); vs_scalar: / scalar_int's at the same active
-- count (the wide-vector offset). newest_core_kind: the kind of the step's last core on a host with more
-- than one kind (cpu_core_kinds). l1_canary_cycles: the L1 chase canary's ns x the clock (4-5 on current
-- x86 cores: an independent check of the clock). package_watts, temperatures, throttled: point_energy.
CREATE OR REPLACE VIEW core_clock_curve AS
WITH load AS (
    SELECT
        run_id,
        host,
        point_index,
        params ->> '$.class'                                                 AS class,
        TRY_CAST(params ->> '$.vector_bits' AS INTEGER)                      AS vector_bits,
        TRY_CAST(params ->> '$.active_cores' AS INTEGER)                     AS active_cores,
        params ->> '$.cpus'                                                  AS cpus,
        TRY_CAST(params -> '$.cpus' ->> '$[#-1]' AS INTEGER)                 AS newest_cpu,
        summary_median                                                       AS clock_ghz,
        summary_ci95_low                                                     AS ci95_low_ghz,
        summary_ci95_high                                                    AS ci95_high_ghz,
        summary_count                                                        AS windows,
        TRY_CAST(params ->> '$.window_ms' AS DOUBLE)                         AS window_ms,
        TRY_CAST(context ->> '$.slowest_thread_ghz' AS DOUBLE)               AS slowest_thread_ghz,
        TRY_CAST(context ->> '$.fastest_thread_ghz' AS DOUBLE)               AS fastest_thread_ghz,
        TRY_CAST(context ->> '$.min_cpu_share' AS DOUBLE)                    AS min_cpu_share,
        TRY_CAST(context ->> '$.l1_canary_cycles' AS DOUBLE)                 AS l1_canary_cycles
    FROM points
    WHERE experiment = 'core_clock' AND metric = 'core_clock' AND unit = 'GHz'
),
-- one clock per class and active count to divide by: a host repeating a point must not multiply the rows
baseline AS (
    SELECT run_id, host, class, active_cores, median(clock_ghz) AS clock_ghz
    FROM load
    GROUP BY ALL
)
SELECT
    l.run_id,
    l.host,
    l.point_index,
    l.class,
    l.vector_bits,
    l.active_cores,
    l.cpus,
    k.core_kind                                                              AS newest_core_kind,
    l.clock_ghz,
    l.ci95_low_ghz,
    l.ci95_high_ghz,
    l.windows,
    l.window_ms,
    l.slowest_thread_ghz,
    l.fastest_thread_ghz,
    l.min_cpu_share,
    l.l1_canary_cycles,
    l.clock_ghz / one.clock_ghz                                              AS vs_one_core,
    l.clock_ghz / scalar.clock_ghz                                           AS vs_scalar,
    e.package_watts,
    e.temperature_before_c,
    e.temperature_after_c,
    e.throttled
FROM load AS l
LEFT JOIN baseline AS one
  ON one.run_id = l.run_id AND one.host = l.host AND one.class = l.class AND one.active_cores = 1
LEFT JOIN baseline AS scalar
  ON scalar.run_id = l.run_id AND scalar.host = l.host AND scalar.class = 'scalar_int'
 AND scalar.active_cores = l.active_cores
LEFT JOIN cpu_core_kinds AS k
  ON k.run_id = l.run_id AND k.host = l.host AND k.cpu = l.newest_cpu AND k.kinds_on_host > 1
LEFT JOIN point_energy AS e
  ON e.run_id = l.run_id AND e.host = l.host AND e.experiment = 'core_clock' AND e.point_index = l.point_index;
