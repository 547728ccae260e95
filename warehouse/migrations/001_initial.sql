-- 001: the tables a result bundle is loaded into. Every row of every table except `hosts` belongs to
-- one (run_id, host); ingest deletes and re-inserts that set in one transaction when a bundle changes.
-- Times are UTC (TIMESTAMP without zone). Sizes are bytes. See warehouse/README.md for every column.

CREATE TABLE hosts (
    host            VARCHAR PRIMARY KEY,
    first_loaded_at TIMESTAMP NOT NULL
);

CREATE TABLE runs (
    run_id             VARCHAR NOT NULL,
    host               VARCHAR NOT NULL,
    profile            VARCHAR NOT NULL,
    status             VARCHAR,
    error              VARCHAR,
    started_at         TIMESTAMP NOT NULL,
    finished_at        TIMESTAMP NOT NULL,
    fleetscope_version VARCHAR NOT NULL,
    fleetscope_git_sha VARCHAR NOT NULL,
    bundle_schema      INTEGER NOT NULL,
    bundle_path        VARCHAR NOT NULL,
    content_sha256     VARCHAR NOT NULL,
    loaded_at          TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, host)
);

CREATE TABLE facts (
    run_id VARCHAR NOT NULL,
    host   VARCHAR NOT NULL,
    facts  JSON NOT NULL,
    PRIMARY KEY (run_id, host)
);

CREATE TABLE cache_levels (
    run_id          VARCHAR NOT NULL,
    host            VARCHAR NOT NULL,
    cache_index     INTEGER NOT NULL,
    level           INTEGER NOT NULL,
    type            VARCHAR NOT NULL,
    size_bytes      BIGINT NOT NULL,
    ways            INTEGER,
    line_bytes      INTEGER,
    shared_cpu_list VARCHAR,
    instances       INTEGER,
    PRIMARY KEY (run_id, host, cache_index)
);

CREATE TABLE knob_values (
    run_id        VARCHAR NOT NULL,
    host          VARCHAR NOT NULL,
    knob          VARCHAR NOT NULL,
    path          VARCHAR,
    available     BOOLEAN NOT NULL,
    before_value  VARCHAR,
    applied_value VARCHAR,
    after_value   VARCHAR,
    note          VARCHAR,
    PRIMARY KEY (run_id, host, knob)
);

CREATE TABLE experiments (
    run_id      VARCHAR NOT NULL,
    host        VARCHAR NOT NULL,
    experiment  VARCHAR NOT NULL,
    run_order   INTEGER NOT NULL,
    status      VARCHAR NOT NULL,
    file        VARCHAR,
    error       VARCHAR,
    wall_s      DOUBLE,
    point_count INTEGER NOT NULL,
    PRIMARY KEY (run_id, host, experiment)
);

CREATE TABLE points (
    run_id            VARCHAR NOT NULL,
    host              VARCHAR NOT NULL,
    experiment        VARCHAR NOT NULL,
    point_index       INTEGER NOT NULL,
    kernel            VARCHAR NOT NULL,
    metric            VARCHAR NOT NULL,
    unit              VARCHAR NOT NULL,
    params            JSON NOT NULL,
    summary_min       DOUBLE NOT NULL,
    summary_median    DOUBLE NOT NULL,
    summary_mean      DOUBLE NOT NULL,
    summary_ci95_low  DOUBLE NOT NULL,
    summary_ci95_high DOUBLE NOT NULL,
    summary_count     INTEGER NOT NULL,
    context           JSON,
    PRIMARY KEY (run_id, host, experiment, point_index)
);

CREATE TABLE samples (
    run_id       VARCHAR NOT NULL,
    host         VARCHAR NOT NULL,
    experiment   VARCHAR NOT NULL,
    point_index  INTEGER NOT NULL,
    kernel       VARCHAR NOT NULL,
    metric       VARCHAR NOT NULL,
    unit         VARCHAR NOT NULL,
    params       JSON NOT NULL,
    sample_index INTEGER NOT NULL,
    value        DOUBLE NOT NULL,
    PRIMARY KEY (run_id, host, experiment, point_index, sample_index)
);
