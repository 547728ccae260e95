-- mlp_curve: memory-level parallelism, one row per chain count k: t(k) = the median over repeats of
-- each repeat's median ns per access, and mlp = t(1) / t(k) within the same run (NULL without k = 1).
CREATE OR REPLACE VIEW mlp_curve AS
WITH per_k AS (
    SELECT
        run_id,
        host,
        TRY_CAST(params ->> '$.chains' AS INTEGER)            AS chains,
        TRY_CAST(params ->> '$.working_set_bytes' AS BIGINT)  AS working_set_bytes,
        median(summary_median)                                AS ns_per_access,
        min(summary_min)                                      AS min_ns_per_access,
        count(*)                                              AS repeats
    FROM points
    WHERE experiment = 'mlp' AND metric = 'latency' AND unit = 'ns'
    GROUP BY ALL
)
SELECT
    per_k.*,
    one.ns_per_access / per_k.ns_per_access                   AS mlp
FROM per_k
LEFT JOIN per_k AS one
  ON one.run_id = per_k.run_id AND one.host = per_k.host AND one.chains = 1
 AND one.working_set_bytes = per_k.working_set_bytes;
