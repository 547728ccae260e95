-- Latency at the sizes that matter, each host's latest run, one row per page policy and size.
-- Port of analysis/README.md's query: one map column (host -> ns), as there; DataFrame.groupBy(...).pivot("host")
-- gives a column per host.
WITH latest AS (
  SELECT host, max(run_id) AS run_id FROM runs GROUP BY host
)
SELECT c.page_policy, c.working_set_bytes div 1024 AS kib,
       map_from_entries(array_sort(collect_list(struct(c.host, round(c.median_ns, 2))))) AS ns_by_host
FROM latency_curve c JOIN latest USING (host, run_id)
WHERE c.working_set_bytes IN (16384, 262144, 1048576, 8388608, 67108864, 134217728)
GROUP BY c.page_policy, kib
ORDER BY page_policy, kib;
