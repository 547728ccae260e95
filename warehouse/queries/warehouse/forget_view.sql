-- Forget a view whose file is gone, after dropping it (?: view name).
DELETE FROM schema_views WHERE view_name = ?
