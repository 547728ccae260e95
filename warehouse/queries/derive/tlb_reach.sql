-- The TLB sweep per page size and page count, and a reference host's published TLB curve (chain 'published':
-- ns per access as the source gave it, no control chain: control and paired columns NULL). Parameters: run_id, host.
SELECT page_size, page_bytes, pages, tlb_min_ns, control_min_ns, paired_difference_median_ns
FROM (
    SELECT page_size, page_bytes, pages, tlb_min_ns, control_min_ns, paired_difference_median_ns
    FROM tlb_reach
    WHERE run_id = ? AND host = ?
    UNION ALL
    SELECT params ->> '$.page_size', TRY_CAST(params ->> '$.page_bytes' AS BIGINT),
           TRY_CAST(params ->> '$.pages' AS BIGINT), summary_min, NULL, NULL
    FROM points
    WHERE run_id = ? AND host = ? AND experiment = 'tlb' AND (params ->> '$.chain') = 'published'
      AND metric = 'latency' AND unit = 'ns' AND TRY_CAST(params ->> '$.pages' AS BIGINT) > 0 AND summary_min > 0
)
ORDER BY pages
