-- point_counters: the perf_event_open counts each kernel point took over its own timed samples
-- (context.counters, kernels/include/counters.h), one row per point and event. Unlike perf_counters
-- (perf stat around the whole process), set-up, allocation and calibration are outside the count.
-- Events the host could not count keep their state (`not supported`, `not permitted`, `not counted`)
-- and a NULL value. running_fraction < 1: the PMU was multiplexed and the count covers that share of
-- the region. per_access divides a count by the accesses the point timed (accesses_per_sample x
-- samples); ipc is instructions / cycles of one group (NULL without hardware counters); throttled is
-- true when some CPU's thermal_throttle count rose during the point (NULL where the kernel has none).
CREATE OR REPLACE VIEW point_counters AS
WITH counted AS (
    SELECT
        run_id,
        host,
        experiment,
        point_index,
        kernel,
        metric,
        params,
        context -> '$.counters'                                     AS counters,
        TRY_CAST(context ->> '$.precision.samples' AS DOUBLE)
          * TRY_CAST(params ->> '$.accesses_per_sample' AS DOUBLE)  AS accesses
    FROM points
    WHERE context ->> '$.counters.scope' = 'timed region'
)
SELECT
    c.run_id,
    c.host,
    c.experiment,
    c.point_index,
    c.kernel,
    c.metric,
    c.params,
    e.event,
    c.counters -> '$.events' -> e.event ->> '$.state'                             AS state,
    TRY_CAST(c.counters -> '$.events' -> e.event ->> '$.value' AS HUGEINT)        AS value,
    TRY_CAST(c.counters -> '$.events' -> e.event ->> '$.time_enabled_ns' AS HUGEINT) AS time_enabled_ns,
    TRY_CAST(c.counters -> '$.events' -> e.event ->> '$.time_running_ns' AS HUGEINT) AS time_running_ns,
    TRY_CAST(c.counters -> '$.events' -> e.event ->> '$.running_fraction' AS DOUBLE)  AS running_fraction,
    TRY_CAST(c.counters -> '$.events' -> e.event ->> '$.value' AS DOUBLE) / nullif(c.accesses, 0) AS per_access,
    TRY_CAST(c.counters ->> '$.ipc' AS DOUBLE)                                     AS ipc,
    TRY_CAST(c.counters ->> '$.throttle.throttled' AS BOOLEAN)                     AS throttled,
    TRY_CAST(c.counters ->> '$.user_only' AS BOOLEAN)                              AS user_only
FROM counted AS c
CROSS JOIN LATERAL (SELECT unnest(json_keys(c.counters -> '$.events')) AS event) AS e;
