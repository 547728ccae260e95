-- The data/unified cache size per level from sysfs, smallest level first: the run's caches (facts.caches) for
-- core kind NULL, else that kind's own caches (facts topology.core_kinds). Parameters: run_id, host, core kind.
WITH kinds AS (
    SELECT unnest(from_json(facts -> '$.topology.core_kinds',
                            '[{"kind": "VARCHAR", "caches": [{"level": "INTEGER", "type": "VARCHAR",
                                                              "size_bytes": "BIGINT"}]}]')) AS kind
    FROM facts
    WHERE run_id = $1 AND host = $2 AND json_type(facts -> '$.topology.core_kinds') = 'ARRAY'
),
caches AS (
    SELECT level, type, size_bytes FROM cache_levels WHERE run_id = $1 AND host = $2 AND $3::VARCHAR IS NULL
    UNION ALL
    SELECT cache.level, cache.type, cache.size_bytes
    FROM (SELECT unnest(kind.caches) AS cache FROM kinds WHERE kind.kind = $3::VARCHAR)
)
SELECT max(size_bytes)
FROM caches
WHERE type <> 'Instruction' AND level IS NOT NULL
GROUP BY level
ORDER BY level
