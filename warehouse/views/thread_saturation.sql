-- thread_saturation: the thread-intensity sweep per op and store: the single-thread figure, the peak
-- (largest median GB/s over thread counts) and the saturation point, the fewest threads whose median
-- reaches 95% of the peak. Threads are placed one per physical core first, then on SMT siblings
-- (smt_from_threads: the first thread count that used a sibling, NULL if none did).
CREATE OR REPLACE VIEW thread_saturation AS
SELECT
    run_id,
    host,
    op,
    store,
    max(threads)                                                    AS max_threads,
    max(median_gb_s) FILTER (WHERE threads = 1)                     AS single_thread_gb_s,
    max(median_gb_s)                                                AS peak_gb_s,
    arg_max(threads, median_gb_s)                                   AS peak_threads,
    min(threads) FILTER (WHERE median_gb_s >= 0.95 * peak)          AS saturation_threads,
    min(threads) FILTER (WHERE smt_siblings_used)                   AS smt_from_threads
FROM (SELECT *, max(median_gb_s) OVER (PARTITION BY run_id, host, op, store) AS peak
      FROM bandwidth_points WHERE experiment = 'thread_sweep')
GROUP BY run_id, host, op, store;
