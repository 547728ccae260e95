-- 005: what fleetscope infers from the bandwidth family (issue 4): bandwidth per inferred cache level
-- (the bandwidth sweep's points on each level's latency plateau) and the SAXPY average-memory-access-
-- time fit (only where the PMU counted misses). Recomputed with every derive of the run, like 004's.

CREATE TABLE inferred_level_bandwidth (
    run_id          VARCHAR NOT NULL,
    host            VARCHAR NOT NULL,
    level           VARCHAR,
    op              VARCHAR,
    store           VARCHAR,
    bandwidth_gb_s  DOUBLE,
    sizes           INTEGER,
    note            VARCHAR
);

CREATE TABLE inferred_saxpy (
    run_id              VARCHAR NOT NULL,
    host                VARCHAR NOT NULL,
    strides             INTEGER NOT NULL,
    max_slowdown        DOUBLE,
    max_slowdown_stride INTEGER,
    miss_event          VARCHAR,
    hit_ns              DOUBLE,
    miss_penalty_ns     DOUBLE,
    r_squared           DOUBLE,
    note                VARCHAR
);
