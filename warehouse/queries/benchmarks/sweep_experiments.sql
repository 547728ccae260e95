-- benchmarks/sweep_accuracy.py: each experiment's wall time, points loaded and notes (the adaptive sweep's own).
SELECT experiment, wall_s, point_count, notes
FROM experiments
ORDER BY run_order;
