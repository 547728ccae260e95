-- storage_percentiles: every storage latency percentile, fio and diskspd alike, one row per output
-- file, job, direction and percentile: what the storage chart draws against queue depth.
-- fio: lat (submission to completion) where fio measured it, else clat (completion), named in
-- latency_kind; queue_depth = iodepth, threads = numjobs. diskspd: its I/O latency over all targets
-- (per-target rows left out), queue_depth = outstanding I/Os per thread; percentile 0 and 100 are
-- its min and max. rw uses fio's words for both tools (randread, randwrite, randrw, read, write, rw).
CREATE OR REPLACE VIEW storage_percentiles AS
WITH fio AS (
    SELECT
        run_id,
        host,
        experiment,
        path,
        tool,
        TRY_CAST(params ->> 'document' AS INTEGER)                      AS part,
        params ->> 'job'                                                 AS job,
        params ->> 'direction'                                           AS direction,
        params ->> 'rw'                                                  AS rw,
        COALESCE(
            TRY_CAST(params ->> 'block_size_bytes' AS BIGINT),
            TRY_CAST(regexp_extract(lower(params ->> 'block_size'), '^([0-9]+)', 1) AS BIGINT)
            * CASE regexp_extract(lower(params ->> 'block_size'), '^[0-9]+([kmgt]?)', 1)
                  WHEN 'k' THEN 1024 WHEN 'm' THEN 1048576 WHEN 'g' THEN 1073741824
                  WHEN 't' THEN 1099511627776 ELSE 1 END)                 AS block_size_bytes,
        TRY_CAST(params ->> 'iodepth' AS INTEGER)                        AS queue_depth,
        TRY_CAST(params ->> 'numjobs' AS INTEGER)                        AS threads,
        params ->> 'ioengine'                                            AS ioengine,
        split_part(metric, '_', 1)                                       AS latency_kind,
        TRY_CAST(params ->> 'percentile' AS DOUBLE)                      AS percentile,
        value                                                            AS latency_ns
    FROM tool_samples
    WHERE tool = 'fio' AND metric IN ('lat_percentile', 'clat_percentile')
),
diskspd AS (
    SELECT
        run_id,
        host,
        experiment,
        path,
        tool,
        TRY_CAST(params ->> 'timespan' AS INTEGER)                       AS part,
        COALESCE(params ->> 'job', regexp_extract(path, '([^/]+)\.[^./]+$', 1)) AS job,
        params ->> 'direction'                                           AS direction,
        CASE WHEN (params ->> 'access') = 'random' THEN 'rand' ELSE '' END
        || CASE TRY_CAST(params ->> 'write_ratio_percent' AS DOUBLE)
               WHEN 0 THEN 'read' WHEN 100 THEN 'write' ELSE 'rw' END    AS rw,
        TRY_CAST(params ->> 'block_size_bytes' AS BIGINT)                AS block_size_bytes,
        TRY_CAST(params ->> 'outstanding_ios_per_thread' AS INTEGER)     AS queue_depth,
        TRY_CAST(params ->> 'threads' AS INTEGER)                        AS threads,
        CAST(NULL AS VARCHAR)                                            AS ioengine,
        'lat'                                                            AS latency_kind,
        TRY_CAST(params ->> 'percentile' AS DOUBLE)                      AS percentile,
        value                                                            AS latency_ns
    FROM tool_samples
    WHERE tool = 'diskspd' AND metric = 'latency_percentile' AND (params ->> 'target') IS NULL
)
SELECT run_id, host, experiment, path, tool, job, direction, rw, block_size_bytes, queue_depth, threads,
       ioengine, latency_kind, percentile, latency_ns
FROM fio
QUALIFY latency_kind = max(latency_kind) OVER (PARTITION BY run_id, host, path, part, job, direction)
UNION ALL BY NAME
SELECT run_id, host, experiment, path, tool, job, direction, rw, block_size_bytes, queue_depth, threads,
       ioengine, latency_kind, percentile, latency_ns
FROM diskspd
