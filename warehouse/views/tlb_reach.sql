-- tlb_reach: ns per access vs pages touched (one line per page) beside the control chain that loads
-- the same number of lines packed into few pages; translation_ns = tlb - control (medians), the
-- paired columns come from the per-sample differences. One row per page size and page count (and pinned
-- CPU: a host with more than one core kind measures each kind's; view cpu_core_kinds). A reference host's
-- published TLB curve (chain 'published', `fleetscope import curve`) has no control chain: its control,
-- translation and paired columns are NULL and its tlb columns are the source's ns per access. A sweep by page
-- stride (kernels_tlb_page_strides: a line every STRIDE bytes of 4 KiB pages) is a curve of its own: its
-- page_size says the stride ('4k, 16 KiB stride'), so charts and the inference keep it apart.
CREATE OR REPLACE VIEW tlb_reach AS
WITH chains AS (
    SELECT
        run_id,
        host,
        CASE WHEN TRY_CAST(params ->> '$.page_stride_bytes' AS BIGINT) > TRY_CAST(params ->> '$.page_bytes' AS BIGINT)
             THEN concat(params ->> '$.page_size', ', ',
                         TRY_CAST(params ->> '$.page_stride_bytes' AS BIGINT) // 1024, ' KiB stride')
             ELSE params ->> '$.page_size' END                AS page_size,
        TRY_CAST(params ->> '$.pages' AS BIGINT)              AS pages,
        TRY_CAST(params ->> '$.page_bytes' AS BIGINT)         AS page_bytes,
        coalesce(TRY_CAST(params ->> '$.page_stride_bytes' AS BIGINT),
                 TRY_CAST(params ->> '$.page_bytes' AS BIGINT)) AS page_stride_bytes,
        params ->> '$.chain'                                  AS chain,
        TRY_CAST(params ->> '$.huge_granted' AS BOOLEAN)      AS huge_granted,
        TRY_CAST(params ->> '$.cpu' AS INTEGER)               AS cpu,
        summary_median,
        summary_mean,
        (SELECT ps.std FROM point_spread AS ps WHERE ps.run_id = points.run_id AND ps.host = points.host
            AND ps.experiment = points.experiment AND ps.point_index = points.point_index) AS summary_std,
        summary_min,
        TRY_CAST(context ->> '$.paired_difference_median_ns' AS DOUBLE) AS paired_median,
        TRY_CAST(context ->> '$.paired_difference_min_ns' AS DOUBLE)    AS paired_min
    FROM points
    WHERE experiment = 'tlb' AND metric = 'latency' AND unit = 'ns'
),
-- one control per page size, count and CPU: a host repeating a point must not multiply the rows
controls AS (
    SELECT run_id, host, page_size, pages, cpu, median(summary_median) AS summary_median,
           min(summary_min) AS summary_min
    FROM chains
    WHERE chain = 'control'
    GROUP BY ALL
)
SELECT
    tlb.run_id,
    tlb.host,
    tlb.page_size,
    tlb.page_bytes,
    tlb.page_stride_bytes,
    tlb.pages,
    tlb.summary_median                                        AS tlb_median_ns,
    tlb.summary_mean                                          AS tlb_mean_ns,
    tlb.summary_std                                           AS tlb_std_ns,
    control.summary_median                                    AS control_median_ns,
    tlb.summary_min                                           AS tlb_min_ns,
    control.summary_min                                       AS control_min_ns,
    tlb.summary_median - control.summary_median               AS translation_ns,
    tlb.paired_median                                         AS paired_difference_median_ns,
    tlb.paired_min                                            AS paired_difference_min_ns,
    tlb.huge_granted                                          AS huge_granted,
    tlb.cpu
FROM chains AS tlb
LEFT JOIN controls AS control
  ON control.run_id = tlb.run_id AND control.host = tlb.host AND control.page_size = tlb.page_size
 AND control.pages = tlb.pages AND control.cpu IS NOT DISTINCT FROM tlb.cpu
WHERE (tlb.chain = 'tlb' AND control.pages IS NOT NULL) OR tlb.chain = 'published';
