-- report/compute_headline: the figures the summary, the fleet page, compare and outliers show of the compute
-- family, of a batch of runs (the runs in chosen_runs), from view compute_figures: the integer clock with one core
-- and with all active (core_clock), the widest class's FP64 FLOP/s on one core and on all, and its FLOP per cycle
-- per core (peak_flops). One row per run that measured either.
SELECT *
FROM compute_figures
WHERE (run_id, host) IN (FROM chosen_runs)
