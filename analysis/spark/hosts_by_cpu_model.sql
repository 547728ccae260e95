-- Hosts grouped by CPU model, with their sysfs cache sizes (lists sorted; DuckDB's list(DISTINCT) has no order).
SELECT get_json_object(f.facts, '$.cpu.model_name') AS cpu, array_sort(collect_set(r.host)) AS hosts,
       array_sort(collect_set(format_string('L%d%s %d KiB', c.level, left(c.type, 1), c.size_bytes div 1024))) AS caches
FROM runs r JOIN facts f USING (run_id, host) JOIN cache_levels c USING (run_id, host)
WHERE c.type <> 'Instruction'
GROUP BY cpu;
