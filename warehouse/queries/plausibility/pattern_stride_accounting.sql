-- pattern_stride's byte accounting per point. Parameters: run_id, host.
SELECT params ->> '$.pattern', TRY_CAST(params ->> '$.stride_bytes' AS BIGINT),
       TRY_CAST(params ->> '$.lines_touched' AS BIGINT), TRY_CAST(params ->> '$.line_bytes' AS BIGINT),
       TRY_CAST(params ->> '$.footprint_bytes' AS BIGINT)
FROM points
WHERE run_id = ? AND host = ? AND experiment = 'pattern_stride'
