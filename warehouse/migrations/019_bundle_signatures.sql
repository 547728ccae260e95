-- 019: what the files of a loaded bundle's folder looked like when ingest read them (issue 33: batch ingest).
-- signature is a sha256 over every entry under the folder (relative path, type, size, inode, modification
-- and change times, in ns), taken before the files were read; content_sha256 is the content hash that
-- reading validated. A later ingest whose folder shows the same signature skips the bundle without reading
-- it (a stat per file instead of a read and hash of every byte); any other signature reads and hashes the
-- files as before. A folder whose files changed less than a second before the signature was taken gets
-- no row: a change in that same second might leave the times as they were.
CREATE TABLE bundle_signatures (
    run_id         VARCHAR NOT NULL,
    host           VARCHAR NOT NULL,
    bundle_path    VARCHAR NOT NULL,
    signature      VARCHAR NOT NULL,
    content_sha256 VARCHAR NOT NULL,
    PRIMARY KEY (run_id, host)
);
