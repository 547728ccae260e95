-- The plausibility checks of the chosen runs, flagged first. Parameters: hosts, run_ids (the chosen pairs).
WITH chosen AS (SELECT unnest(?::VARCHAR[]) AS host, unnest(?::VARCHAR[]) AS run_id)
SELECT host, run_id, rule, status, subject, item, value, threshold, unit, evidence, reason
FROM flags SEMI JOIN chosen USING (host, run_id)
ORDER BY status <> 'flagged', host, rule
