-- report/fleet_overview: one row per host (its latest run) for the fleet page.
SELECT *
FROM fleet_overview
ORDER BY host
