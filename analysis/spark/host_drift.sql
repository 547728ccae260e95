-- One host across runs: each working set's latency against the host's first run, per page policy.
SELECT page_policy, working_set_bytes div 1024 AS kib, run_id, round(median_ns, 2) AS ns,
       round(median_ns / first_value(median_ns) OVER (PARTITION BY page_policy, working_set_bytes ORDER BY run_id), 3)
         AS vs_first
FROM latency_curve WHERE host = 'localhost' ORDER BY page_policy, kib, run_id;
