-- I/Os in flight by Little's law (IOPS x mean latency from submission to completion) beside the queue depth
-- each storage point asked for: fio jobs (summed over the read and write directions of a mixed job; iodepth
-- x numjobs; lat, else clat + slat) and the aio kernel's engines (queue_depth reads in flight in total).
-- Parameters: run_id ($1), host ($2).
SELECT * FROM (
SELECT
    'fio_jobs'                                                      AS subject,
    job || CASE WHEN count(*) > 1 THEN ' (' || string_agg(direction, ' + ' ORDER BY direction) || ')'
                ELSE ' ' || any_value(direction) END                AS item,
    any_value(ioengine)                                             AS engine,
    any_value(iodepth) * coalesce(any_value(numjobs), 1)            AS queue_depth,
    sum(iops * coalesce(lat_mean_ns, clat_mean_ns + coalesce(slat_mean_ns, 0)) / 1e9) AS in_flight
FROM fio_jobs
WHERE run_id = $1 AND host = $2 AND iops > 0 AND iodepth > 0
GROUP BY path, document, job
UNION ALL
SELECT
    'aio_curve',
    engine || ' qd' || queue_depth || CASE WHEN direct THEN ' direct' ELSE ' buffered' END,
    engine,
    queue_depth,
    iops * latency_mean_us / 1e6
FROM aio_curve
WHERE run_id = $1 AND host = $2 AND iops > 0 AND queue_depth > 0
)
WHERE in_flight > 0
ORDER BY subject, item
