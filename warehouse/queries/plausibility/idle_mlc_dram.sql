-- MLC's idle DRAM latency. Parameters: run_id, host.
SELECT min(latency_ns) FROM mlc_idle_latency WHERE run_id = ? AND host = ? AND level = 'DRAM'
