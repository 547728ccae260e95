-- MLC's ladders (one curve per output file and run) and the loaded_latency kernel's (one per traffic) of the
-- chosen runs; the delays are in different units (MLC: cycles; the kernel: spin iterations), so they only
-- order a curve. Parameters: hosts, run_ids (the chosen pairs).
WITH chosen AS (SELECT unnest(?::VARCHAR[]) AS host, unnest(?::VARCHAR[]) AS run_id)
SELECT * FROM (
    SELECT host, run_id, 'mlc' AS source, path || ' run ' || run_index AS curve, traffic,
           delay_cycles AS delay, bandwidth_mb_s / 1000 AS bandwidth_gb_s, latency_ns
    FROM mlc_loaded_latency SEMI JOIN chosen USING (host, run_id)
    WHERE latency_ns IS NOT NULL
    UNION ALL
    SELECT host, run_id, 'loaded_latency', 'kernel ' || traffic, traffic, delay, bandwidth_gb_s, latency_ns
    FROM loaded_latency_curve SEMI JOIN chosen USING (host, run_id)
    WHERE load_threads > 0
)
ORDER BY host, source, curve, delay DESC
