-- 006: the trust boundary (issue 14).
-- The views a writer created, with the sha256 of the file each came from: readers open the file
-- read-only and compare, so a warehouse whose views an older fleetscope wrote asks for a migrate.
CREATE TABLE schema_views (
    view_name  VARCHAR PRIMARY KEY,
    sha256     VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL
);
