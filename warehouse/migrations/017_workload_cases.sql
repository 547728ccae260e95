-- 017: workloads profiled the allocator study's way (issue 31). workload_cases holds one row per workload of a
-- run, from its perf stat counts and its perf record profiles (raw_outputs, tools perf and perf_report):
-- the rates the counters give, the case (A store/dependency-bound, B miss-bound, C instruction-cache-bound)
-- with its evidence and next step, or what could not be decided and why, and each profile's sample-count
-- verdict. workload_functions sets each function's share of the time profile beside its share of the miss
-- profile. Both are derived at ingest by fleetscope.analyze.profiling; method version 10 computes them for
-- older runs, imported perf outputs included.
CREATE TABLE workload_cases (
    run_id              VARCHAR NOT NULL,
    host                VARCHAR NOT NULL,
    experiment          VARCHAR NOT NULL,
    workload            VARCHAR NOT NULL,
    counter_tier        VARCHAR NOT NULL,
    case_id             VARCHAR,
    classification      VARCHAR NOT NULL,
    evidence            VARCHAR,
    next_step           VARCHAR,
    undecided           VARCHAR,
    noticed             VARCHAR,
    ipc                 DOUBLE,
    cache_mpki          DOUBLE,
    cache_miss_rate     DOUBLE,
    llc_mpki            DOUBLE,
    l1d_mpki            DOUBLE,
    l1d_miss_rate       DOUBLE,
    dtlb_mpki           DOUBLE,
    dtlb_miss_rate      DOUBLE,
    itlb_mpki           DOUBLE,
    itlb_miss_rate      DOUBLE,
    icache_mpki         DOUBLE,
    branch_miss_rate    DOUBLE,
    not_supported       VARCHAR,
    multiplexed         BOOLEAN NOT NULL,
    running_percent_min DOUBLE,
    time_event          VARCHAR,
    time_samples        BIGINT,
    time_ranked         INTEGER,
    time_verdict        VARCHAR,
    time_rule           VARCHAR,
    miss_event          VARCHAR,
    miss_samples        BIGINT,
    miss_ranked         INTEGER,
    miss_verdict        VARCHAR,
    miss_rule           VARCHAR,
    miss_note           VARCHAR,
    PRIMARY KEY (run_id, host, experiment, workload)
);

CREATE TABLE workload_functions (
    run_id           VARCHAR NOT NULL,
    host             VARCHAR NOT NULL,
    experiment       VARCHAR NOT NULL,
    workload         VARCHAR NOT NULL,
    function_index   INTEGER NOT NULL,
    symbol           VARCHAR NOT NULL,
    dso              VARCHAR,
    kernel           BOOLEAN NOT NULL,
    time_share       DOUBLE,
    time_share_below DOUBLE,
    time_samples     DOUBLE,
    time_rank        VARCHAR,
    miss_share       DOUBLE,
    miss_share_below DOUBLE,
    miss_samples     DOUBLE,
    miss_rank        VARCHAR,
    miss_per_time    DOUBLE,
    ratio_bound      VARCHAR,
    mark             VARCHAR,
    PRIMARY KEY (run_id, host, experiment, workload, function_index)
);
