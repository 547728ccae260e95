-- Each view a writer created and the sha256 of the file it came from.
SELECT view_name, sha256 FROM schema_views
