-- perf counts per SAXPY stride process, per update, with their state. Parameters: run_id, host.
SELECT stride_elements, event, state, per_update FROM saxpy_counters WHERE run_id = ? AND host = ?
