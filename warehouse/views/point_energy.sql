-- point_energy: energy and CPU package temperature around each point's timed region, where the host exposes
-- them (context.counters.energy and .temperature, kernels/include/sensors.h: powercap RAPL zones and hwmon
-- coretemp / k10temp / zenpower / cpu_thermal), beside the thermal-throttle counts. One row per point that
-- recorded counters. energy_available false (with energy_reason) where nothing could be read: a VM has no
-- powercap directory, energy_uj is root only since Linux 5.10; no number is then given, never a 0.
-- package_watts and package_joules sum the package-N zones (NULL if one of them could not be read);
-- core_watts and dram_watts the core and dram zones (NULL where the CPU has none: AMD has no dram zone).
-- joules_per_gb (bandwidth points: package W / GB/s moved) and joules_per_gflop (peak_flops points: package
-- W / GFLOP/s) are the energy of one unit of work. temperature_*_c: the hottest package sensor before and after.
CREATE OR REPLACE VIEW point_energy AS
WITH zones AS (
    SELECT
        run_id,
        host,
        experiment,
        point_index,
        unnest(from_json(context -> '$.counters.energy.zones',
                         '[{"name": "VARCHAR", "joules": "DOUBLE", "watts": "DOUBLE", "wrapped": "BOOLEAN"}]')) AS zone
    FROM points
    WHERE json_type(context -> '$.counters.energy.zones') = 'ARRAY'
),
per_point AS (
    SELECT
        run_id,
        host,
        experiment,
        point_index,
        CASE WHEN count(*) FILTER (WHERE zone.name LIKE 'package-%' AND zone.watts IS NULL) = 0
             THEN sum(zone.watts) FILTER (WHERE zone.name LIKE 'package-%') END           AS package_watts,
        CASE WHEN count(*) FILTER (WHERE zone.name LIKE 'package-%' AND zone.joules IS NULL) = 0
             THEN sum(zone.joules) FILTER (WHERE zone.name LIKE 'package-%') END          AS package_joules,
        sum(zone.watts) FILTER (WHERE zone.name = 'core')                                AS core_watts,
        sum(zone.watts) FILTER (WHERE zone.name = 'dram')                                AS dram_watts,
        bool_or(zone.wrapped)                                                            AS counter_wrapped
    FROM zones
    GROUP BY ALL
),
sensors AS (
    SELECT
        run_id,
        host,
        experiment,
        point_index,
        unnest(from_json(context -> '$.counters.temperature.sensors',
                         '[{"before_c": "DOUBLE", "after_c": "DOUBLE"}]'))                AS sensor
    FROM points
    WHERE json_type(context -> '$.counters.temperature.sensors') = 'ARRAY'
),
temperatures AS (
    SELECT run_id, host, experiment, point_index,
           max(sensor.before_c) AS temperature_before_c, max(sensor.after_c) AS temperature_after_c
    FROM sensors
    GROUP BY ALL
)
SELECT
    p.run_id,
    p.host,
    p.experiment,
    p.point_index,
    p.kernel,
    TRY_CAST(p.context ->> '$.counters.energy.available' AS BOOLEAN)                    AS energy_available,
    p.context ->> '$.counters.energy.reason'                                            AS energy_reason,
    TRY_CAST(p.context ->> '$.counters.energy.seconds' AS DOUBLE)                       AS energy_seconds,
    e.package_watts,
    e.package_joules,
    e.core_watts,
    e.dram_watts,
    e.counter_wrapped,
    CASE WHEN p.kernel = 'bandwidth' AND p.unit = 'GB/s' AND p.summary_median > 0
         THEN e.package_watts / p.summary_median END                                    AS joules_per_gb,
    CASE WHEN p.kernel = 'peak_flops' AND p.unit = 'GFLOP/s' AND p.summary_median > 0
         THEN e.package_watts / p.summary_median END                                    AS joules_per_gflop,
    TRY_CAST(p.context ->> '$.counters.temperature.available' AS BOOLEAN)               AS temperature_available,
    p.context ->> '$.counters.temperature.reason'                                       AS temperature_reason,
    t.temperature_before_c,
    t.temperature_after_c,
    TRY_CAST(p.context ->> '$.counters.throttle.throttled' AS BOOLEAN)                  AS throttled,
    TRY_CAST(p.context ->> '$.counters.throttle.core_events' AS BIGINT)                 AS throttle_core_events,
    TRY_CAST(p.context ->> '$.counters.throttle.package_events' AS BIGINT)              AS throttle_package_events
FROM points AS p
LEFT JOIN per_point AS e
  ON e.run_id = p.run_id AND e.host = p.host AND e.experiment = p.experiment AND e.point_index = p.point_index
LEFT JOIN temperatures AS t
  ON t.run_id = p.run_id AND t.host = p.host AND t.experiment = p.experiment AND t.point_index = p.point_index
WHERE json_type(p.context -> '$.counters') = 'OBJECT';
