"""What the host page shows of a run's derived rows: the inferred hierarchy beside sysfs, TLB reach, MLP
saturation, loaded-latency figures, bandwidth per level, the SAXPY fit, and every plausibility check
(templates/report/inferred.html.j2)."""

from __future__ import annotations

import duckdb

from fleetscope.sections import Column

LEVEL_COLUMNS = (
    Column("page_policy", "pages"), Column("level", "level"), Column("latency_ns", "latency ns", "number"),
    Column("latency_cycles", "cycles", "number"), Column("capacity_bytes", "effective size", "bytes"),
    Column("onset_bytes", "rise from", "bytes"), Column("completion_bytes", "rise to", "bytes"),
    Column("sysfs_size_bytes", "sysfs size", "bytes"), Column("note", "note"),
)
TLB_COLUMNS = (
    Column("page_size", "page size"), Column("l1_entries", "L1 entries", "number"),
    Column("l1_onset_pages", "L1 step from", "number"), Column("l1_completion_pages", "to", "number"),
    Column("l1_miss_ns", "L1 miss ns", "number"), Column("l2_entries", "L2 entries", "number"),
    Column("l2_onset_pages", "L2 step from", "number"), Column("l2_completion_pages", "to", "number"),
    Column("walk_ns", "walk ns", "number"), Column("note", "note"),
)
MLP_COLUMNS = (
    Column("working_set_bytes", "working set", "bytes"), Column("saturation_chains", "saturates at k", "number"),
    Column("max_mlp", "largest MLP", "number"), Column("max_mlp_chains", "at k", "number"), Column("note", "note"),
)
LOADED_COLUMNS = (
    Column("source", "source"), Column("path", "output"), Column("traffic", "traffic"), Column("idle_latency_ns", "idle ns", "number"),
    Column("peak_bandwidth_gb_s", "peak GB/s", "number"), Column("knee_bandwidth_gb_s", "knee GB/s", "number"),
    Column("knee_latency_ns", "knee ns", "number"), Column("doubling_bandwidth_gb_s", "2x idle at GB/s", "number"),
    Column("knee_outstanding_lines", "lines in flight at knee", "number"), Column("note", "note"),
)

LEVEL_BANDWIDTH_COLUMNS = (
    Column("level", "level"), Column("op", "op"), Column("store", "stores"),
    Column("bandwidth_gb_s", "GB/s", "number"), Column("sizes", "sweep points", "number"), Column("note", "note"),
)
SAXPY_COLUMNS = (
    Column("strides", "strides", "number"), Column("max_slowdown", "largest slowdown", "number"),
    Column("max_slowdown_stride", "at stride", "number"), Column("miss_event", "miss counter"),
    Column("hit_ns", "hit ns", "number"), Column("miss_penalty_ns", "miss penalty ns", "number"),
    Column("r_squared", "R²", "number"), Column("note", "note"),
)


def _records(connection: duckdb.DuckDBPyConnection, sql: str, key: list) -> list[dict]:
    cursor = connection.execute(sql, key)
    columns = [description[0] for description in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def derived_context(connection: duckdb.DuckDBPyConnection, key: list) -> dict:
    """Template variables for one run: rows of each derived table and their columns."""
    where = "WHERE run_id = ? AND host = ?"
    return {
        "inferred_levels": _records(connection, f"SELECT * FROM inferred_levels {where} "
                                    "ORDER BY page_policy <> 'thp', page_policy, level_index", key),
        "inferred_tlb": _records(connection, f"SELECT * FROM inferred_tlb {where} ORDER BY page_size", key),
        "inferred_mlp": _records(connection, f"SELECT * FROM inferred_mlp {where}", key),
        "inferred_loaded_latency": _records(connection, f"SELECT * FROM inferred_loaded_latency {where} "
                                            "ORDER BY source, path, run_index, traffic", key),
        "inferred_level_bandwidth": _records(connection, f"SELECT * FROM inferred_level_bandwidth {where} "
                                             "ORDER BY op, store, level", key),
        "inferred_saxpy": _records(connection, f"SELECT * FROM inferred_saxpy {where}", key),
        "flags": _records(connection, f"SELECT * FROM flags {where} "
                          "ORDER BY status <> 'flagged', status <> 'not_run', rule, subject", key),
        "inference": (connection.execute(f"SELECT inference_version FROM inference_runs {where}", key).fetchone()
                      or (None,))[0],
        "derived_columns": {"levels": LEVEL_COLUMNS, "tlb": TLB_COLUMNS, "mlp": MLP_COLUMNS, "loaded": LOADED_COLUMNS,
                            "level_bandwidth": LEVEL_BANDWIDTH_COLUMNS, "saxpy": SAXPY_COLUMNS},
    }
