"""`fleetscope ingest`: validate result bundles and load each into the warehouse in one transaction.

Loading is idempotent on (run_id, host): the content hash of the bundle decides whether a bundle
already in the warehouse is left alone (unchanged) or replaced (re-collected with new content).
A refused bundle leaves the warehouse exactly as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from fleetscope.bundle import Bundle, BundleError, load_bundle, utc_timestamp
from fleetscope.derive import derive_run, is_current
from fleetscope.inference import INFERENCE_VERSION
from fleetscope.warehouse import insert_rows

# Every table holding rows of one (run_id, host); `hosts` is shared by all runs of a host.
RUN_TABLES = ("tool_samples", "raw_outputs", "samples", "points", "experiments", "knob_values", "cache_levels",
              "facts", "runs")


@dataclass(frozen=True)
class Outcome:
    path: Path
    action: str  # loaded | unchanged | replaced | REFUSED
    detail: str


def find_bundles(path: Path) -> list[Path]:
    """Bundle directories under `path`: a bundle itself, a run folder, or a whole results/ tree."""
    if (path / "manifest.json").exists():
        return [path]
    for pattern in ("*/manifest.json", "*/*/manifest.json"):
        found = sorted(manifest.parent for manifest in path.glob(pattern))
        if found:
            return found
    return []


def _cache_rows(bundle: Bundle) -> Iterator[dict]:
    for cache_index, cache in enumerate(bundle.manifest["facts"].get("caches", [])):
        yield {
            "cache_index": cache_index,
            "level": cache["level"],
            "type": cache["type"],
            "size_bytes": cache["size_bytes"],
            "ways": cache.get("ways"),
            "line_bytes": cache.get("line_bytes"),
            "shared_cpu_list": cache.get("shared_cpu_list"),
            "instances": cache.get("instances"),
        }


def _knob_rows(bundle: Bundle) -> Iterator[dict]:
    for knob in bundle.manifest["knobs"]:
        yield {
            "knob": knob["name"],
            "path": knob.get("path"),
            "available": knob["available"],
            "before_value": knob["before"],
            "applied_value": knob["applied"],
            "after_value": knob["after"],
            "note": knob.get("note"),
        }


def _experiment_rows(bundle: Bundle) -> Iterator[dict]:
    point_counts: dict[str, int] = {}
    for point in bundle.points:
        point_counts[point.experiment] = point_counts.get(point.experiment, 0) + 1
    for run_order, experiment in enumerate(bundle.manifest["experiments"]):
        yield {
            "experiment": experiment["name"],
            "run_order": run_order,
            "status": experiment["status"],
            "file": experiment.get("file"),
            "error": experiment.get("error"),
            "wall_s": experiment.get("wall_s"),
            "notes": "; ".join(experiment.get("notes") or []) or None,
            "point_count": point_counts.get(experiment["name"], 0),
        }


def _point_columns(point) -> dict:
    """The columns a point shares with each of its samples."""
    document = point.document
    return {"experiment": point.experiment, "point_index": point.point_index,
            "kernel": document["kernel"], "metric": document["metric"], "unit": document["unit"],
            "params": document["params"]}


def _point_rows(bundle: Bundle) -> Iterator[dict]:
    for point in bundle.points:
        summary = point.document["summary"]
        yield {**_point_columns(point),
               "summary_min": summary["min"],
               "summary_median": summary["median"],
               "summary_mean": summary["mean"],
               "summary_ci95_low": summary["ci95_low"],
               "summary_ci95_high": summary["ci95_high"],
               "summary_count": summary["count"],
               "context": point.document.get("context")}


def _sample_rows(bundle: Bundle) -> Iterator[dict]:
    for point in bundle.points:
        columns = _point_columns(point)
        for sample_index, value in enumerate(point.document["samples"]):
            yield {**columns, "sample_index": sample_index, "value": value}


def _raw_output_rows(bundle: Bundle) -> Iterator[dict]:
    for raw in bundle.raw_outputs:
        yield {"experiment": raw.experiment, "path": raw.path, "tool": raw.tool, "sha256": raw.sha256,
               "bytes": raw.size_bytes, "params": raw.params, "parsed": raw.parsed,
               "truncated": raw.truncated, "note": raw.note}


def _tool_sample_rows(bundle: Bundle) -> Iterator[dict]:
    for raw in bundle.raw_outputs:
        for row_index, row in enumerate(raw.rows):
            yield {"experiment": raw.experiment, "path": raw.path, "tool": raw.tool, "row_index": row_index,
                   "metric": row["metric"], "value": row["value"], "unit": row["unit"], "params": row["params"]}


def _insert_bundle(connection: duckdb.DuckDBPyConnection, bundle: Bundle, loaded_at: str) -> None:
    manifest = bundle.manifest
    key = {"run_id": bundle.run_id, "host": bundle.host}
    connection.execute(
        "INSERT INTO hosts VALUES (?, ?) ON CONFLICT (host) DO NOTHING", [bundle.host, loaded_at]
    )
    run = {
        **key,
        "profile": manifest["profile"],
        "status": manifest.get("status"),
        "error": manifest.get("error"),
        "inventory_groups": manifest.get("inventory_groups"),
        "started_at": utc_timestamp(manifest["started_at"]),
        "finished_at": utc_timestamp(manifest["finished_at"]),
        "fleetscope_version": manifest["fleetscope"]["version"],
        "fleetscope_git_sha": manifest["fleetscope"]["git_sha"],
        "bundle_schema": bundle.delivered_bundle_schema,
        "bundle_path": str(bundle.path),
        "content_sha256": bundle.content_sha256,
        "loaded_at": loaded_at,
    }
    insert_rows(connection, "runs", [run])
    insert_rows(connection, "facts", [{**key, "facts": manifest["facts"]}])
    for table, rows in (
        ("cache_levels", _cache_rows(bundle)),
        ("knob_values", _knob_rows(bundle)),
        ("experiments", _experiment_rows(bundle)),
        ("points", _point_rows(bundle)),
        ("samples", _sample_rows(bundle)),
        ("raw_outputs", _raw_output_rows(bundle)),
        ("tool_samples", _tool_sample_rows(bundle)),
    ):
        insert_rows(connection, table, [{**key, **row} for row in rows])


def load_into(connection: duckdb.DuckDBPyConnection, bundle: Bundle) -> str:
    """Load a validated bundle and derive its inference and flags in one transaction; return loaded,
    unchanged, replaced, or reinferred (unchanged, but its derived rows were recomputed by this method)."""
    loaded_at = datetime.now(UTC).replace(tzinfo=None).isoformat()
    key = [bundle.run_id, bundle.host]
    connection.execute("BEGIN TRANSACTION")
    try:
        existing = connection.execute(
            "SELECT content_sha256 FROM runs WHERE run_id = ? AND host = ?", key
        ).fetchone()
        if existing is not None and existing[0] == bundle.content_sha256:
            if is_current(connection, *key):
                connection.execute("ROLLBACK")
                return "unchanged"
            derive_run(connection, *key)  # loaded by an older inference method
            connection.execute("COMMIT")
            return "reinferred"
        if existing is not None:
            for table in RUN_TABLES:
                connection.execute(f"DELETE FROM {table} WHERE run_id = ? AND host = ?", key)
        _insert_bundle(connection, bundle, loaded_at)
        derive_run(connection, *key)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return "loaded" if existing is None else "replaced"


def ingest_bundle(connection: duckdb.DuckDBPyConnection, path: Path) -> Outcome:
    """Validate and load one bundle directory; a problem becomes a REFUSED outcome, not an exception."""
    try:
        bundle = load_bundle(path)
    except BundleError as error:
        return Outcome(path, "REFUSED", str(error))
    try:
        action = load_into(connection, bundle)
    except duckdb.Error as error:
        # The bundle passed validation but a value does not fit the warehouse (e.g. an integer
        # beyond 64 bits); the transaction was rolled back.
        return Outcome(path, "REFUSED", f"{path}: could not be stored ({error}); nothing was loaded")
    where = f"run {bundle.run_id}, host {bundle.host}"
    if action == "unchanged":
        return Outcome(path, action, f"{where}: already loaded, unchanged")
    if action == "reinferred":
        return Outcome(path, "unchanged", f"{where}: already loaded, unchanged; inference and flags recomputed "
                                          f"with method version {INFERENCE_VERSION}")
    experiments = len(bundle.manifest["experiments"])
    samples = sum(len(point.document["samples"]) for point in bundle.points)
    status = bundle.manifest.get("status", "status not recorded")
    detail = f"{where} ({status}): {experiments} experiments, {len(bundle.points)} points, {samples} samples"
    if bundle.raw_outputs:
        tool_rows = sum(len(raw.rows) for raw in bundle.raw_outputs)
        detail += f", {len(bundle.raw_outputs)} raw outputs ({tool_rows} values)"
    return Outcome(path, action, detail)
