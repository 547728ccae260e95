-- The (run_id, host) of every run in the warehouse (a benchmark's own warehouse holds one).
SELECT run_id, host
FROM runs;
