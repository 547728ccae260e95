-- How a reference host's published curve was measured, as the user or the reference library stated it:
-- pattern, page size, relative (ns over L1), and the core clock its source states (NULL where it states none).
-- No row for a run fleetscope measured. Parameters: run_id, host.
SELECT reference ->> '$.pattern', TRY_CAST(reference ->> '$.page_bytes' AS BIGINT),
       coalesce(TRY_CAST(reference ->> '$.relative' AS BOOLEAN), false),
       TRY_CAST(reference ->> '$.clock_ghz' AS DOUBLE)
FROM runs
WHERE run_id = ? AND host = ? AND origin = 'reference'
