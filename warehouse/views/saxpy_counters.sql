-- saxpy_counters: the perf events counted around each SAXPY stride's process (one process per
-- stride; the role labels its point 'strides N', or 'strides N on P-core (CPU 4)' where a host with more
-- than one core kind runs it once per kind), one row per stride, CPU and event. Events the PMU could
-- not count keep their state (`not supported`, `not counted`) with a NULL value; per_update divides a
-- count by the updates the process timed: an upper bound per update, since set-up and calibration
-- are in the count too. cpu: the CPU the label names, else the one the stride's point was pinned to.
CREATE OR REPLACE VIEW saxpy_counters AS
WITH counted AS (
    SELECT
        *,
        TRY_CAST(regexp_extract(point, '^strides (\d+)(?: on .+ \(CPU (\d+)\))?$', 1) AS INTEGER) AS stride_elements,
        TRY_CAST(nullif(regexp_extract(point, '^strides (\d+)(?: on .+ \(CPU (\d+)\))?$', 2), '') AS INTEGER)
                                                                                                 AS label_cpu
    FROM perf_counters
    WHERE experiment = 'saxpy'
),
-- the updates each stride's point timed, per CPU; a label without a CPU (one process per stride) takes the
-- stride's first CPU, so a host naming many CPUs for one stride does not multiply its counters' rows
per_cpu AS (
    SELECT *, min(cpu) OVER (PARTITION BY run_id, host, stride_elements) AS first_cpu
    FROM (
        SELECT run_id, host, TRY_CAST(params ->> '$.stride_elements' AS INTEGER) AS stride_elements,
               TRY_CAST(params ->> '$.cpu' AS INTEGER) AS cpu,
               sum(TRY_CAST(params ->> '$.accesses_per_sample' AS DOUBLE) * summary_count) AS updates
        FROM points WHERE kernel = 'saxpy' GROUP BY ALL
    )
)
SELECT
    c.run_id,
    c.host,
    c.stride_elements,
    c.event,
    c.state,
    c.value,
    c.value / nullif(p.updates, 0)                                  AS per_update,
    coalesce(c.label_cpu, p.cpu)                                    AS cpu
FROM counted AS c
LEFT JOIN per_cpu AS p
  ON p.run_id = c.run_id AND p.host = c.host AND p.stride_elements = c.stride_elements
 AND p.cpu IS NOT DISTINCT FROM coalesce(c.label_cpu, p.first_cpu);
