-- 003: verbatim tool outputs a bundle brought home (MLC text, fio JSON, perf stat CSV, diskspd XML),
-- parsed on ingest by fleetscope.ingest.parsers, and their numbers in long format. Runs loaded by
-- `fleetscope import` (a lab's past outputs) land here too, with runs.profile = 'external'.

CREATE TABLE raw_outputs (
    run_id     VARCHAR NOT NULL,
    host       VARCHAR NOT NULL,
    experiment VARCHAR NOT NULL,
    path       VARCHAR NOT NULL,
    tool       VARCHAR NOT NULL,
    sha256     VARCHAR NOT NULL,
    bytes      BIGINT NOT NULL,
    params     JSON NOT NULL,
    parsed     JSON,
    truncated  BOOLEAN NOT NULL,
    note       VARCHAR,
    PRIMARY KEY (run_id, host, path)
);

CREATE TABLE tool_samples (
    run_id     VARCHAR NOT NULL,
    host       VARCHAR NOT NULL,
    experiment VARCHAR NOT NULL,
    path       VARCHAR NOT NULL,
    tool       VARCHAR NOT NULL,
    row_index  INTEGER NOT NULL,
    metric     VARCHAR NOT NULL,
    value      DOUBLE NOT NULL,
    unit       VARCHAR NOT NULL,
    params     JSON NOT NULL,
    PRIMARY KEY (run_id, host, path, row_index)
);
