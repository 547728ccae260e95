-- compare/runs: every run with its host's identity as that run recorded it (inventory groups,
-- microarchitecture, CPU model), whether it is a reference host's published curve (its source and how it was
-- measured), and its recency: 1 for the host's latest run (as latest_runs orders them), 2 for the one before, and
-- so on.
SELECT r.host, r.run_id, r.started_at, r.status, coalesce(r.origin = 'reference', false) AS is_reference,
       r.reference ->> '$.source' AS reference_source, r.reference ->> '$.tool' AS reference_tool,
       r.reference ->> '$.pattern' AS reference_pattern,
       TRY_CAST(r.reference ->> '$.page_bytes' AS BIGINT) AS reference_page_bytes,
       TRY_CAST(r.reference ->> '$.relative' AS BOOLEAN) AS reference_relative,
       TRY_CAST(r.reference ->> '$.clock_ghz' AS DOUBLE) AS reference_clock_ghz,
       r.reference ->> '$.notes' AS reference_notes, i.microarchitecture, i.uarch_known, i.cpu_model_name,
       i.inventory_groups,
       row_number() OVER (PARTITION BY r.host ORDER BY r.started_at DESC, r.run_id DESC) AS recency
FROM runs AS r
JOIN host_identity AS i USING (run_id, host)
ORDER BY r.host, recency
