-- 014: what the firmware claims beside what the run measured (issue 28): the DIMMs' peak from SMBIOS (or the peak
-- the inventory states), the ACPI HMAT's latency and bandwidth per memory node, the SLIT's relative distances;
-- one row per figure with its verdict, or why there is nothing to compare (fleetscope.analyze.firmware). Derived
-- with the run's other tables; runs loaded before get theirs when they are derived again (inference method 7).
CREATE TABLE firmware_claims (
    run_id      VARCHAR NOT NULL,
    host        VARCHAR NOT NULL,
    figure      VARCHAR NOT NULL,
    source      VARCHAR NOT NULL,
    unit        VARCHAR NOT NULL,
    claimed     DOUBLE,
    measured    DOUBLE,
    measured_by VARCHAR,
    ratio       DOUBLE,
    verdict     VARCHAR NOT NULL,
    note        VARCHAR
);
