-- perf_counters: every event `perf stat -x,` reported, one row per event and output file: around a
-- kernel process (the kernels' perf wrapper: point = the point's label) or in an imported CSV.
-- Events the host could not count keep their state (`not supported`, `not counted`) and a NULL
-- value: nothing is invented. value is for the whole process, setup and calibration included.
CREATE OR REPLACE VIEW perf_counters AS
SELECT
    r.run_id,
    r.host,
    r.experiment,
    r.path,
    r.params ->> 'point' AS point,
    TRY_CAST(r.params ->> 'point_index' AS INTEGER) AS point_index,
    e.event,
    e.name,
    e.pmu,
    e.state,
    e.value,
    e.unit,
    e.running_percent,
    e.multiplexed,
    e.metric_value,
    e.metric_unit
FROM raw_outputs AS r
CROSS JOIN LATERAL (
    SELECT unnest(from_json(r.parsed -> 'events',
        '[{"event": "VARCHAR", "name": "VARCHAR", "pmu": "VARCHAR", "state": "VARCHAR", "value": "DOUBLE",
           "unit": "VARCHAR", "running_percent": "DOUBLE", "multiplexed": "BOOLEAN",
           "metric_value": "DOUBLE", "metric_unit": "VARCHAR"}]')) AS e
)
WHERE r.tool = 'perf' AND r.parsed IS NOT NULL
