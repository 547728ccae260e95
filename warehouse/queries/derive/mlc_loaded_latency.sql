-- MLC's loaded-latency ladders: (MB/s, ns) per delay of each output file and run. Parameters: run_id, host.
SELECT path, run_index, traffic, bandwidth_mb_s, latency_ns FROM mlc_loaded_latency WHERE run_id = ? AND host = ?
