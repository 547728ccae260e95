-- report/relation_exists: whether the warehouse has a table or view of this name (a view a later migration
-- adds is shown only where it exists).
SELECT count(*) > 0
FROM information_schema.tables
WHERE table_name = ?
