-- saxpy_counters: the perf events counted around each SAXPY stride's process (one process per
-- stride; the role labels its point 'strides N'), one row per stride and event. Events the PMU could
-- not count keep their state (`not supported`, `not counted`) with a NULL value; per_update divides a
-- count by the updates the process timed: an upper bound per update, since set-up and calibration
-- are in the count too.
CREATE OR REPLACE VIEW saxpy_counters AS
SELECT
    c.run_id,
    c.host,
    TRY_CAST(regexp_extract(c.point, '^strides (\d+)$', 1) AS INTEGER) AS stride_elements,
    c.event,
    c.state,
    c.value,
    c.value / nullif(p.updates, 0)                                  AS per_update
FROM perf_counters AS c
LEFT JOIN (
    SELECT run_id, host, TRY_CAST(params ->> '$.stride_elements' AS INTEGER) AS stride_elements,
           sum(TRY_CAST(params ->> '$.accesses_per_sample' AS DOUBLE) * summary_count) AS updates
    FROM points WHERE kernel = 'saxpy' GROUP BY ALL
) AS p
  ON p.run_id = c.run_id AND p.host = c.host
 AND p.stride_elements = TRY_CAST(regexp_extract(c.point, '^strides (\d+)$', 1) AS INTEGER)
WHERE c.experiment = 'saxpy';
