-- 006: the trust boundary (issue 14).
-- Samples are stored as lists: one row of point_samples holds consecutive samples of one point
-- (a point of millions is cut into rows of at most 65 536), and the view `samples` unnests them into
-- the long format (run_id, host, experiment, point_index, sample_index, value) the table had. The
-- point's kernel, metric, unit and params are its row of `points`. One row per sample, each repeating
-- the point's params, cost ingest memory and time proportional to samples x params, and the primary-key
-- index as much again: one 10 MB point took 17.5 GB and 91 s.
CREATE TABLE point_samples (
    run_id        VARCHAR NOT NULL,
    host          VARCHAR NOT NULL,
    experiment    VARCHAR NOT NULL,
    point_index   INTEGER NOT NULL,
    first_index   INTEGER NOT NULL,
    sample_values DOUBLE[] NOT NULL
);
INSERT INTO point_samples
SELECT run_id, host, experiment, point_index, 0, list(value ORDER BY sample_index)
FROM samples
GROUP BY run_id, host, experiment, point_index;
DROP TABLE samples;

-- Bundles `fleetscope ingest` refused, one row per bundle folder (view refused_bundles). A row goes
-- when that folder is loaded, found unchanged, or no longer exists.
CREATE TABLE bundle_refusals (
    bundle_path VARCHAR PRIMARY KEY,
    run_id      VARCHAR,
    host        VARCHAR,
    reason      VARCHAR NOT NULL,
    refused_at  TIMESTAMP NOT NULL
);

-- The views a writer created, with the sha256 of the file each came from: readers open the file
-- read-only and compare, so a warehouse whose views an older fleetscope wrote asks for a migrate.
CREATE TABLE schema_views (
    view_name  VARCHAR PRIMARY KEY,
    sha256     VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
