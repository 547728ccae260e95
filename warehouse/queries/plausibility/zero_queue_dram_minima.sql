-- zero_queue's DRAM point: working set and fastest sample. Parameters: run_id, host.
SELECT working_set_bytes, min_ns FROM zero_queue_levels WHERE run_id = ? AND host = ? AND level = 'DRAM'
