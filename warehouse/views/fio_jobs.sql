-- fio_jobs: one row per fio job and direction of every fio JSON output (the fio role's
-- raw/fio/<job>.json, or outputs loaded with `fleetscope import`), pivoted from tool_samples.
-- block_size_bytes is the role's recorded size, else fio's bs text read with fio's base-2 suffixes.
-- Rows come ordered by job (queue depths in numeric order) for the report's table.
-- The percentile columns read lat (submission to completion) where fio measured it, else clat.
CREATE OR REPLACE VIEW fio_jobs AS
WITH samples AS (
    SELECT
        run_id,
        host,
        experiment,
        path,
        TRY_CAST(params ->> 'document' AS INTEGER)                AS document,
        params ->> 'job'                                           AS job,
        params ->> 'direction'                                     AS direction,
        params ->> 'rw'                                            AS rw,
        COALESCE(
            TRY_CAST(params ->> 'block_size_bytes' AS BIGINT),
            TRY_CAST(regexp_extract(lower(params ->> 'block_size'), '^([0-9]+)', 1) AS BIGINT)
            * CASE regexp_extract(lower(params ->> 'block_size'), '^[0-9]+([kmgt]?)', 1)
                  WHEN 'k' THEN 1024 WHEN 'm' THEN 1048576 WHEN 'g' THEN 1073741824
                  WHEN 't' THEN 1099511627776 ELSE 1 END)           AS block_size_bytes,
        TRY_CAST(params ->> 'iodepth' AS INTEGER)                  AS iodepth,
        TRY_CAST(params ->> 'numjobs' AS INTEGER)                  AS numjobs,
        params ->> 'ioengine'                                      AS ioengine,
        TRY_CAST(params ->> 'direct' AS BOOLEAN)                   AS direct,
        metric,
        TRY_CAST(params ->> 'percentile' AS DOUBLE)                AS percentile,
        value
    FROM tool_samples
    WHERE tool = 'fio'
),
jobs AS (
    SELECT
        run_id, host, experiment, path, document, job, direction,
        any_value(rw)                                              AS rw,
        any_value(block_size_bytes)                                AS block_size_bytes,
        any_value(iodepth)                                         AS iodepth,
        any_value(numjobs)                                         AS numjobs,
        any_value(ioengine)                                        AS ioengine,
        any_value(direct)                                          AS direct,
        max(value) FILTER (WHERE metric = 'iops')                  AS iops,
        max(value) FILTER (WHERE metric = 'bandwidth')             AS bandwidth_bytes_per_s,
        max(value) FILTER (WHERE metric = 'io_bytes')              AS io_bytes,
        max(value) FILTER (WHERE metric = 'lat_mean')              AS lat_mean_ns,
        max(value) FILTER (WHERE metric = 'lat_stddev')            AS lat_stddev_ns,
        max(value) FILTER (WHERE metric = 'lat_max')               AS lat_max_ns,
        max(value) FILTER (WHERE metric = 'clat_mean')             AS clat_mean_ns,
        max(value) FILTER (WHERE metric = 'slat_mean')             AS slat_mean_ns,
        CASE WHEN count(*) FILTER (WHERE metric = 'lat_percentile') > 0 THEN 'lat'
             WHEN count(*) FILTER (WHERE metric = 'clat_percentile') > 0 THEN 'clat' END AS latency_kind,
        map_from_entries(list((percentile, value)) FILTER (WHERE metric = 'lat_percentile'))  AS lat_p,
        map_from_entries(list((percentile, value)) FILTER (WHERE metric = 'clat_percentile')) AS clat_p
    FROM samples
    GROUP BY run_id, host, experiment, path, document, job, direction
)
SELECT
    run_id, host, experiment, path, document, job, direction, rw, block_size_bytes, iodepth, numjobs,
    ioengine, direct, iops, bandwidth_bytes_per_s, io_bytes, lat_mean_ns, lat_stddev_ns, lat_max_ns,
    clat_mean_ns, slat_mean_ns, latency_kind,
    (CASE latency_kind WHEN 'lat' THEN lat_p ELSE clat_p END)[50.0]   AS p50_ns,
    (CASE latency_kind WHEN 'lat' THEN lat_p ELSE clat_p END)[99.0]   AS p99_ns,
    (CASE latency_kind WHEN 'lat' THEN lat_p ELSE clat_p END)[99.9]   AS p99_9_ns,
    (CASE latency_kind WHEN 'lat' THEN lat_p ELSE clat_p END)[99.99]  AS p99_99_ns
FROM jobs
-- the report's table reads this view without an ORDER BY of its own
ORDER BY run_id, host, regexp_replace(job, '_qd[0-9]+$', ''), iodepth, job, direction
