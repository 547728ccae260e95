-- 015: what fleetscope infers from the core_clock experiment (issue 30), per run: the turbo curve of each
-- instruction class (inferred_clock) and the ramp from idle to the top clock (inferred_clock_ramp), both
-- computed by fleetscope.analyze.clock. Method version 8 computes them for runs loaded before.
CREATE TABLE inferred_clock (
    run_id           VARCHAR NOT NULL,
    host             VARCHAR NOT NULL,
    class            VARCHAR NOT NULL,
    vector_bits      INTEGER,
    one_core_ghz     DOUBLE,
    all_cores_ghz    DOUBLE,
    max_active_cores INTEGER,
    drop             DOUBLE,
    flat             BOOLEAN,
    steps            VARCHAR,
    vs_scalar_one_core  DOUBLE,
    vs_scalar_all_cores DOUBLE,
    note             VARCHAR
);

CREATE TABLE inferred_clock_ramp (
    run_id          VARCHAR NOT NULL,
    host            VARCHAR NOT NULL,
    ramps           INTEGER NOT NULL,
    ramp_ms         DOUBLE,
    max_ramp_ms     DOUBLE,
    idle_ghz        DOUBLE,
    top_ghz         DOUBLE,
    slice_ms        DOUBLE,
    slices_left_out INTEGER,
    flat            BOOLEAN,
    note            VARCHAR
);
