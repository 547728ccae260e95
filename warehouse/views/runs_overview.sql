-- runs_overview: one row per loaded run of a host, with how its experiments went and where it came from
-- (origin playbook | import | reference; a reference run's published source and how it was measured).
CREATE OR REPLACE VIEW runs_overview AS
SELECT
    runs.host,
    runs.run_id,
    runs.profile,
    runs.origin,
    runs.reference ->> '$.source'                                       AS reference_source,
    runs.reference ->> '$.pattern'                                      AS reference_pattern,
    TRY_CAST(runs.reference ->> '$.page_bytes' AS BIGINT)               AS reference_page_bytes,
    TRY_CAST(runs.reference ->> '$.relative' AS BOOLEAN)                AS reference_relative,
    runs.reference ->> '$.tool'                                         AS reference_tool,
    TRY_CAST(runs.reference ->> '$.clock_ghz' AS DOUBLE)                AS reference_clock_ghz,
    runs.reference ->> '$.notes'                                        AS reference_notes,
    runs.status,
    runs.error,
    runs.started_at,
    runs.finished_at,
    date_diff('second', runs.started_at, runs.finished_at)              AS duration_s,
    count(experiments.experiment)                                       AS experiments_total,
    count(experiments.experiment) FILTER (WHERE experiments.status = 'ok')      AS experiments_ok,
    count(experiments.experiment) FILTER (WHERE experiments.status = 'failed')  AS experiments_failed,
    count(experiments.experiment) FILTER (WHERE experiments.status = 'skipped') AS experiments_skipped,
    coalesce(sum(experiments.point_count), 0)                           AS point_count,
    runs.fleetscope_version,
    runs.bundle_path,
    runs.loaded_at
FROM runs
LEFT JOIN experiments USING (run_id, host)
GROUP BY ALL;
