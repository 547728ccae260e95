-- 004: what fleetscope infers from a run's curves (fleetscope.analyze.inference) and the plausibility flags on its
-- numbers (fleetscope.analyze.plausibility). Both are recomputed on every ingest of the run, in the bundle's
-- transaction, and again when a later fleetscope changes the method (inference_runs.inference_version).

CREATE TABLE inference_runs (
    run_id            VARCHAR NOT NULL,
    host              VARCHAR NOT NULL,
    inference_version INTEGER NOT NULL,
    computed_at       TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, host)
);

CREATE TABLE inferred_levels (
    run_id              VARCHAR NOT NULL,
    host                VARCHAR NOT NULL,
    page_policy         VARCHAR,
    level_index         INTEGER NOT NULL,
    level               VARCHAR,
    latency_ns          DOUBLE,
    latency_cycles      DOUBLE,
    plateau_first_bytes BIGINT,
    plateau_last_bytes  BIGINT,
    capacity_bytes      BIGINT,
    onset_bytes         BIGINT,
    completion_bytes    BIGINT,
    sysfs_size_bytes    BIGINT,
    note                VARCHAR
);

CREATE TABLE inferred_tlb (
    run_id              VARCHAR NOT NULL,
    host                VARCHAR NOT NULL,
    page_size           VARCHAR NOT NULL,
    page_bytes          BIGINT,
    l1_entries          BIGINT,
    l1_onset_pages      BIGINT,
    l1_completion_pages BIGINT,
    l1_miss_ns          DOUBLE,
    l2_entries          BIGINT,
    l2_onset_pages      BIGINT,
    l2_completion_pages BIGINT,
    walk_ns             DOUBLE,
    note                VARCHAR
);

CREATE TABLE inferred_mlp (
    run_id            VARCHAR NOT NULL,
    host              VARCHAR NOT NULL,
    working_set_bytes BIGINT,
    saturation_chains INTEGER,
    max_mlp           DOUBLE,
    max_mlp_chains    INTEGER,
    note              VARCHAR
);

CREATE TABLE inferred_loaded_latency (
    run_id                  VARCHAR NOT NULL,
    host                    VARCHAR NOT NULL,
    source                  VARCHAR NOT NULL,
    path                    VARCHAR,
    run_index               INTEGER,
    traffic                 VARCHAR,
    points                  INTEGER NOT NULL,
    idle_latency_ns         DOUBLE,
    peak_bandwidth_gb_s     DOUBLE,
    knee_bandwidth_gb_s     DOUBLE,
    knee_latency_ns         DOUBLE,
    doubling_bandwidth_gb_s DOUBLE,
    knee_outstanding_lines  DOUBLE,
    note                    VARCHAR
);

CREATE TABLE flags (
    run_id     VARCHAR NOT NULL,
    host       VARCHAR NOT NULL,
    rule       VARCHAR NOT NULL,
    status     VARCHAR NOT NULL,
    subject    VARCHAR NOT NULL,
    item       VARCHAR,
    value      DOUBLE,
    threshold  DOUBLE,
    unit       VARCHAR,
    comparison VARCHAR,
    evidence   VARCHAR,
    reason     VARCHAR
);
