-- perf counts per SAXPY stride process, per update, with their state; core_kind where the host has more than
-- one kind (the kind of the CPU the process was pinned to; NULL on a one-kind host). Parameters: run_id, host.
SELECT CASE WHEN k.kinds_on_host > 1 THEN k.core_kind END, v.stride_elements, v.event, v.state, v.per_update
FROM saxpy_counters AS v
LEFT JOIN cpu_core_kinds k ON k.run_id = v.run_id AND k.host = v.host AND k.cpu = v.cpu
WHERE v.run_id = ? AND v.host = ?
