-- point_core_kinds: for every point of the kernels that place several threads themselves (affinity, smt),
-- the core kind(s) of the CPUs it ran on, from the facts (view cpu_core_kinds): affinity, the CPUs the thread
-- was seen on (context.cpus_seen: its pinned CPU, or where the scheduler put it); smt, the placement's CPUs
-- (params.cpus). core_kind names each kind once, fastest first, joined by ' + ' ('P-core + E-core': a
-- thread that ran on both, a placement across kinds); kind_rank: its fastest kind's rank (0 fastest); kinds:
-- how many kinds. No row where the facts hold no topology.
CREATE OR REPLACE VIEW point_core_kinds AS
WITH used AS (
    SELECT
        run_id,
        host,
        experiment,
        point_index,
        unnest(from_json(CASE experiment WHEN 'affinity' THEN context -> '$.cpus_seen' ELSE params -> '$.cpus' END,
                         '["INTEGER"]'))                                   AS cpu
    FROM points
    WHERE experiment IN ('affinity', 'smt') AND metric = 'throughput'
      AND json_type(CASE experiment WHEN 'affinity' THEN context -> '$.cpus_seen' ELSE params -> '$.cpus' END) = 'ARRAY'
),
kinds AS (
    SELECT DISTINCT u.run_id, u.host, u.experiment, u.point_index, k.core_kind, k.kind_rank
    FROM used AS u
    JOIN cpu_core_kinds AS k ON k.run_id = u.run_id AND k.host = u.host AND k.cpu = u.cpu
)
SELECT
    run_id,
    host,
    experiment,
    point_index,
    string_agg(core_kind, ' + ' ORDER BY kind_rank)                        AS core_kind,
    min(kind_rank)                                                         AS kind_rank,
    count(*)                                                               AS kinds
FROM kinds
GROUP BY run_id, host, experiment, point_index;
