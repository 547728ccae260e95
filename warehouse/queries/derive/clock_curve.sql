-- derive/clock_curve: core_clock's (class, vector bits, active cores, clock) of one run, for
-- fleetscope.analyze.clock.infer_turbo. Parameters: run_id, host.
SELECT class, vector_bits, active_cores, clock_ghz
FROM core_clock_curve
WHERE run_id = ? AND host = ? AND clock_ghz > 0 AND active_cores >= 1
ORDER BY class, active_cores
