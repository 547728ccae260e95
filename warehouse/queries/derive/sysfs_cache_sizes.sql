-- The data/unified cache size and ways per level from sysfs, smallest level first: the run's caches (facts.caches)
-- for core kind NULL, else that kind's own caches (facts topology.core_kinds). ways (NULL where sysfs gave none)
-- tells the size estimator how a level's sets fill. Parameters: run_id, host, core kind.
WITH kinds AS (
    SELECT unnest(from_json(facts -> '$.topology.core_kinds',
                            '[{"kind": "VARCHAR", "caches": [{"level": "INTEGER", "type": "VARCHAR",
                                                              "size_bytes": "BIGINT", "ways": "INTEGER"}]}]')) AS kind
    FROM facts
    WHERE run_id = $1 AND host = $2 AND json_type(facts -> '$.topology.core_kinds') = 'ARRAY'
),
caches AS (
    SELECT level, type, size_bytes, ways FROM cache_levels WHERE run_id = $1 AND host = $2 AND $3::VARCHAR IS NULL
    UNION ALL
    SELECT cache.level, cache.type, cache.size_bytes, cache.ways
    FROM (SELECT unnest(kind.caches) AS cache FROM kinds WHERE kind.kind = $3::VARCHAR)
)
SELECT level, max(size_bytes), arg_max(ways, size_bytes)  -- level: the ORDER BY term, a column of the answer for a batch
FROM caches
WHERE type <> 'Instruction' AND level IS NOT NULL
GROUP BY level
ORDER BY level
