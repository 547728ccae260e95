-- host_facts: the main environment facts of each run as typed columns, read from the verbatim JSON
-- in `facts`. A fact that is absent or of an unexpected type reads as NULL here (the JSON keeps it).
CREATE OR REPLACE VIEW host_facts AS
SELECT
    run_id,
    host,
    facts ->> '$.hostname'                                      AS hostname,
    facts ->> '$.cpu.model_name'                                AS cpu_model_name,
    facts ->> '$.cpu.vendor'                                    AS cpu_vendor,
    TRY_CAST(facts ->> '$.cpu.family' AS INTEGER)               AS cpu_family,
    TRY_CAST(facts ->> '$.cpu.model' AS INTEGER)                AS cpu_model,
    facts ->> '$.cpu.microcode'                                 AS cpu_microcode,
    TRY_CAST(facts ->> '$.cpu.logical_cpus' AS INTEGER)         AS logical_cpus,
    TRY_CAST(facts ->> '$.cpu.physical_cores' AS INTEGER)       AS physical_cores,
    TRY_CAST(facts ->> '$.cpu.sockets' AS INTEGER)              AS sockets,
    TRY_CAST(facts ->> '$.cpu.threads_per_core' AS INTEGER)     AS threads_per_core,
    TRY_CAST(facts ->> '$.cpu.smt_active' AS BOOLEAN)           AS smt_active,
    TRY_CAST(facts ->> '$.memory.mem_total_bytes' AS BIGINT)    AS mem_total_bytes,
    TRY_CAST(facts ->> '$.memory.mem_available_bytes' AS BIGINT) AS mem_available_bytes,
    TRY_CAST(facts ->> '$.numa.nodes' AS INTEGER)               AS numa_nodes,
    facts ->> '$.kernel.release'                                AS kernel_release,
    facts ->> '$.kernel.cmdline'                                AS kernel_cmdline,
    facts ->> '$.os.pretty_name'                                AS os_pretty_name,
    facts ->> '$.virtualization'                                AS virtualization,
    facts ->> '$.thp.enabled'                                   AS thp_enabled,
    facts ->> '$.thp.defrag'                                    AS thp_defrag,
    TRY_CAST(facts ->> '$.hugepages.nr_hugepages' AS BIGINT)    AS nr_hugepages,
    TRY_CAST(facts ->> '$.hugepages.hugepagesize_bytes' AS BIGINT) AS hugepagesize_bytes,
    facts ->> '$.governor'                                      AS cpufreq_governor,
    facts ->> '$.boost'                                         AS boost,
    TRY_CAST(facts ->> '$.perf_event_paranoid' AS INTEGER)      AS perf_event_paranoid,
    facts ->> '$.compiler'                                      AS compiler
FROM facts;
