-- fleet_overview: one row per host: its latest run, CPU, memory and sysfs cache sizes (per instance), and
-- its identity as that run recorded it (inventory groups, microarchitecture: view host_identity); is_reference
-- when the latest run is a published curve (origin 'reference'), not a lab machine, with where it came from and
-- how it was measured.
CREATE OR REPLACE VIEW fleet_overview AS
SELECT
    latest.host,
    latest.run_id                 AS last_run_id,
    latest.started_at             AS last_run_started_at,
    latest.status                 AS last_run_status,
    latest.profile                AS last_run_profile,
    latest.origin = 'reference'   AS is_reference,
    latest.reference_source,
    latest.reference_tool,
    latest.reference_pattern,
    latest.reference_page_bytes,
    latest.reference_relative,
    latest.reference_clock_ghz,
    latest.reference_notes,
    latest.experiments_total,
    latest.experiments_failed,
    latest.experiments_skipped,
    (SELECT count(*) FROM runs WHERE runs.host = latest.host) AS run_count,
    facts.hostname,
    facts.cpu_model_name,
    facts.logical_cpus,
    facts.physical_cores,
    facts.sockets,
    facts.mem_total_bytes,
    facts.virtualization,
    facts.kernel_release,
    identity.inventory_groups,
    identity.microarchitecture,
    identity.uarch_known,
    caches.l1d_bytes,
    caches.l2_bytes,
    caches.l3_bytes
FROM latest_runs AS latest
LEFT JOIN host_facts AS facts USING (run_id, host)
LEFT JOIN host_identity AS identity USING (run_id, host)
LEFT JOIN (
    SELECT
        run_id,
        host,
        max(size_bytes) FILTER (WHERE level = 1 AND type = 'Data')                AS l1d_bytes,
        max(size_bytes) FILTER (WHERE level = 2 AND type IN ('Data', 'Unified')) AS l2_bytes,
        max(size_bytes) FILTER (WHERE level = 3 AND type IN ('Data', 'Unified')) AS l3_bytes
    FROM cache_levels
    GROUP BY run_id, host
) AS caches USING (run_id, host);
