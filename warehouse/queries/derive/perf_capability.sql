-- What the facts' probe found perf can count on the host: (capability, reason). Parameters: run_id, host.
SELECT facts ->> '$.perf.capability', facts ->> '$.perf.reason'
FROM facts
WHERE run_id = ? AND host = ?
