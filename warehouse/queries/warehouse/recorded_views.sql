-- The views a writer created (schema_views exists from migration 006 on).
SELECT view_name FROM schema_views ORDER BY view_name
