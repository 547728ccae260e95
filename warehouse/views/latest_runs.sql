-- latest_runs: the most recently started run of each host (ties broken by run_id), as in runs_overview.
CREATE OR REPLACE VIEW latest_runs AS
SELECT *
FROM runs_overview
QUALIFY row_number() OVER (PARTITION BY host ORDER BY started_at DESC, run_id DESC) = 1;
