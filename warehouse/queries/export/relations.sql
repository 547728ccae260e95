-- Every table and view of the warehouse with its columns in order: name, 'table' or 'view', [(column, type)].
SELECT table_name,
       CASE table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END,
       list((column_name, data_type) ORDER BY ordinal_position)
FROM information_schema.columns
JOIN information_schema.tables USING (table_catalog, table_schema, table_name)
WHERE table_schema = 'main'
GROUP BY ALL
ORDER BY table_name
