"""`fleetscope ingest`: validate result bundles and load each into the warehouse in one transaction.

Loading is idempotent on (run_id, host): the content hash of the bundle decides whether a bundle
already in the warehouse is left alone (unchanged) or replaced (re-collected with new content).
A bundle is streamed into its transaction file by file and validated as it goes, so memory follows
the largest line, not the bundle; a problem anywhere rolls the whole bundle back and refuses it,
recorded in bundle_refusals (view refused_bundles) until that folder loads. A refused bundle leaves
the warehouse exactly as it was and never stops the next one; only a warehouse that cannot be written
(a full disk) stops the ingest.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import re
import shutil
import tempfile
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from fleetscope.ingest.bundle import (Bundle, BundleError, Point, name_pattern, open_bundle, stated_content,
                                      utc_timestamp)
from fleetscope.analyze.derive import DERIVED_TABLES, derive_run, is_current
from fleetscope.errors import UserError
from fleetscope.analyze.inference import INFERENCE_VERSION
from fleetscope.store.query import printable
from fleetscope.resources import sql
from fleetscope.store.warehouse import (INSERT_BATCH_ROWS, STAGE, apply_migrations, attach_stage, create_views, insert_rows,
                                        quoted, using)

# Every table holding rows of one (run_id, host); `hosts` is shared by all runs of a host.
RUN_TABLES = ("tool_samples", "raw_outputs", "point_samples", "points", "plan_experiments", "experiments", "knob_values",
              "cache_levels", "facts", "runs")
# What the stage holds of one run: its own rows, the host's row and its derived rows.
STAGED_TABLES = (*RUN_TABLES, "hosts", *DERIVED_TABLES)
# Samples per INSERT, and per row of point_samples: a point of millions is cut into rows of this many.
SAMPLE_BATCH = 65536
# Raw outputs per INSERT: as many as hold this many bytes of the files (each parsed output goes in whole).
RAW_BATCH_BYTES = 8 * 2**20
# host -> its inventory groups, as the controller knows them (fleetscope.ingest.inventory_groups); None: not given
Groups = Mapping[str, tuple[str, ...]] | None
# A refusal's reason quotes what the host sent: it is stored and printed at most this long, and with
# its control characters escaped, so one outcome stays one line (the warehouse play reads them).
MAX_REASON_CHARS = 2000


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


def _reason(text: str) -> str:
    """A refusal's reason as it is printed and stored: printable, at most MAX_REASON_CHARS."""
    text = printable(text)
    return text if len(text) <= MAX_REASON_CHARS else text[:MAX_REASON_CHARS - 1] + "…"


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


def _experiment_rows(bundle: Bundle, point_counts: Counter) -> Iterator[dict]:
    for run_order, experiment in enumerate(bundle.manifest["experiments"]):
        yield {
            "experiment": experiment["name"],
            "run_order": run_order,
            "status": experiment["status"],
            "file": experiment.get("file"),
            "error": experiment.get("error"),
            "wall_s": experiment.get("wall_s"),
            "notes": "; ".join(experiment.get("notes") or []) or None,
            "point_count": point_counts[experiment["name"]],
        }


def _plan_rows(bundle: Bundle) -> Iterator[dict]:
    """The plan's experiments (manifest `plan`, validated by the schema): what each was to cost."""
    for entry in (bundle.manifest.get("plan") or {}).get("experiments") or []:
        yield {
            "experiment": entry["name"],
            "points": entry["points"],
            "processes": entry["processes"],
            "bound_s": entry["bound_s"],
            "allowance_s": entry.get("allowance_s"),
            "target_rel": entry.get("target_rel"),
            "cap_s": entry.get("cap_s"),
            "kinds": entry.get("kinds"),
            "skip": entry.get("skip"),
            "notes": "; ".join(entry.get("notes") or []) or None,
            "cuts": "; ".join(entry.get("cuts") or []) or None,
        }


def _point_row(point: Point) -> dict:
    document = point.document
    summary = document["summary"]
    return {"experiment": point.experiment, "point_index": point.point_index, "kernel": document["kernel"],
            "metric": document["metric"], "unit": document["unit"], "params": document["params"],
            "summary_min": summary["min"], "summary_median": summary["median"], "summary_mean": summary["mean"],
            "summary_ci95_low": summary["ci95_low"], "summary_ci95_high": summary["ci95_high"],
            "summary_count": summary["count"], "context": document.get("context")}


class _Rows:
    """Rows for one table, inserted INSERT_BATCH_ROWS at a time, or sooner once the data behind them
    (raw outputs) reaches max_bytes: one INSERT per batch, not per row, and memory stays bounded."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, table: str, max_bytes: int = 2**63):
        self.connection, self.table, self.max_bytes = connection, table, max_bytes
        self.rows: list[dict] = []
        self.bytes = self.inserted = 0

    def add(self, row: dict, size_bytes: int = 0) -> None:
        self.rows.append(row)
        self.bytes += size_bytes
        if len(self.rows) >= INSERT_BATCH_ROWS or self.bytes >= self.max_bytes:
            self.flush()

    def flush(self) -> None:
        self.inserted += insert_rows(self.connection, self.table, self.rows)
        self.rows, self.bytes = [], 0


class _SampleWriter:
    """Samples into point_samples as lists of at most SAMPLE_BATCH, one JSON document of about
    SAMPLE_BATCH numbers per INSERT: a list per point instead of a row per sample costs DuckDB a third
    of the time, and a point of millions never sits in one document."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, key: list):
        self.connection, self.key = connection, key
        self.chunks: list[dict] = []
        self.pending = 0
        self.written = 0

    def add(self, point: Point) -> None:
        samples = point.document["samples"]
        for first in range(0, len(samples), SAMPLE_BATCH):
            chunk = samples[first:first + SAMPLE_BATCH]
            self.chunks.append({"experiment": point.experiment, "point_index": point.point_index,
                                "first_index": first, "sample_values": chunk})
            self.pending += len(chunk)
            if self.pending >= SAMPLE_BATCH:
                self.flush()

    def flush(self) -> None:
        if self.chunks:
            self.connection.execute(sql("ingest/insert_samples"), [*self.key, json.dumps(self.chunks)])
            self.written += self.pending
            self.chunks, self.pending = [], 0


@dataclass(frozen=True)
class _Loaded:
    points: int
    samples: int
    raw_outputs: int
    tool_rows: int


def _insert_bundle(connection: duckdb.DuckDBPyConnection, bundle: Bundle, loaded_at: str,
                   groups: Groups = None) -> _Loaded:
    manifest = bundle.manifest
    key = {"run_id": bundle.run_id, "host": bundle.host}
    connection.execute(sql("ingest/insert_host"), [bundle.host, loaded_at])
    insert_rows(connection, "runs", [{
        **key,
        "profile": manifest["profile"],
        "status": manifest.get("status"),
        "error": manifest.get("error"),
        # the controller's (ingest --inventory-groups), never the manifest's: a host could claim any group
        "inventory_groups": list(groups[bundle.host]) if groups is not None and bundle.host in groups else None,
        "origin": manifest.get("origin", "playbook"),
        "reference": manifest.get("reference"),
        "started_at": utc_timestamp(manifest["started_at"]),
        "finished_at": utc_timestamp(manifest["finished_at"]),
        "fleetscope_version": manifest["fleetscope"]["version"],
        "fleetscope_git_sha": manifest["fleetscope"]["git_sha"],
        "bundle_schema": bundle.delivered_bundle_schema,
        "bundle_path": str(bundle.path),
        "content_sha256": bundle.content_sha256,
        "loaded_at": loaded_at,
        "plan_budget_s": (manifest.get("plan") or {}).get("budget_s"),
        "plan_bound_s": (manifest.get("plan") or {}).get("bound_s"),
        "plan_points": (manifest.get("plan") or {}).get("points"),
    }])
    insert_rows(connection, "facts", [{**key, "facts": manifest["facts"]}])
    insert_rows(connection, "plan_experiments", ({**key, **row} for row in _plan_rows(bundle)))
    insert_rows(connection, "cache_levels", ({**key, **row} for row in _cache_rows(bundle)))
    insert_rows(connection, "knob_values", ({**key, **row} for row in _knob_rows(bundle)))

    point_counts: Counter = Counter()
    points = _Rows(connection, "points")
    samples = _SampleWriter(connection, list(key.values()))
    for point in bundle.points():
        point_counts[point.experiment] += 1
        points.add({**key, **_point_row(point)})
        samples.add(point)
    points.flush()
    samples.flush()
    insert_rows(connection, "experiments", ({**key, **row} for row in _experiment_rows(bundle, point_counts)))

    raw_outputs = _Rows(connection, "raw_outputs", max_bytes=RAW_BATCH_BYTES)
    tool_samples = _Rows(connection, "tool_samples")
    for raw in bundle.raw_outputs():
        raw_outputs.add({**key, "experiment": raw.experiment, "path": raw.path, "tool": raw.tool, "sha256": raw.sha256,
                         "bytes": raw.size_bytes, "params": raw.params, "parsed": raw.parsed,
                         "truncated": raw.truncated, "note": raw.note}, raw.size_bytes)
        for row_index, row in enumerate(raw.rows):
            tool_samples.add({**key, "experiment": raw.experiment, "path": raw.path, "tool": raw.tool,
                              "row_index": row_index, "metric": row["metric"], "value": row["value"],
                              "unit": row["unit"], "params": row["params"]})
    raw_outputs.flush()
    tool_samples.flush()
    return _Loaded(points.inserted, samples.written, raw_outputs.inserted, tool_samples.inserted)


def _derive(connection: duckdb.DuckDBPyConnection, bundle: Bundle) -> None:
    try:
        derive_run(connection, bundle.run_id, bundle.host)
    except duckdb.Error:
        raise
    except Exception as error:  # noqa: BLE001 - hostile but schema-valid numbers refuse one bundle, not the ingest
        raise BundleError(f"{bundle.path}: its points passed validation but deriving the hierarchy and flags from "
                          f"them failed ({type(error).__name__}: {str(error)[:200]}); nothing of it was "
                          "loaded") from None


def _rollback(connection: duckdb.DuckDBPyConnection) -> None:
    # DuckDB ends the transaction itself when a write fails (a full disk); ROLLBACK would then say
    # "no transaction is active" and hide the real error.
    try:
        connection.execute("ROLLBACK")
    except duckdb.TransactionException:
        pass


def _clear_stage(connection: duckdb.DuckDBPyConnection) -> None:
    for table in STAGED_TABLES:
        connection.execute(f"DELETE FROM {quoted(STAGE)}.main.{table}")
    connection.execute(f"CHECKPOINT {quoted(STAGE)}")


def _stage_loaded_run(connection: duckdb.DuckDBPyConnection, warehouse: str, key: list) -> None:
    """Copy a run already in the warehouse into the stage, to derive it again there."""
    connection.execute(f"INSERT INTO hosts SELECT * FROM {quoted(warehouse)}.main.hosts WHERE host = ?", key[1:])
    for table in reversed(RUN_TABLES):
        connection.execute(f"INSERT INTO {table} SELECT * FROM {quoted(warehouse)}.main.{table} "
                           "WHERE run_id = ? AND host = ?", key)


def _hand_over(connection: duckdb.DuckDBPyConnection, bundle: Bundle, staged: Callable[[str], str],
               existing: tuple | None, loaded_at: str) -> str:
    """In one transaction, replace what the warehouse holds of the bundle's run with the rows staged for it,
    staged(table) naming where a table's are (only the derived ones when the run is loaded with the same
    content: a run derived again). Returns loaded | replaced | reinferred."""
    key = [bundle.run_id, bundle.host]
    unchanged = existing is not None and existing[0] == bundle.content_sha256
    replaced = DERIVED_TABLES if unchanged else (*RUN_TABLES, *DERIVED_TABLES)
    connection.execute("BEGIN TRANSACTION")
    try:
        connection.execute(sql("ingest/forget_refusal"), [str(bundle.path)])
        if existing is not None:
            for table in replaced:
                connection.execute(f"DELETE FROM {table} WHERE run_id = ? AND host = ?", key)
        connection.execute(sql("ingest/insert_host"), [bundle.host, loaded_at])
        for table in (*reversed(RUN_TABLES), *DERIVED_TABLES):  # a run's parents first
            if table in replaced:
                connection.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {staged(table)}")
        connection.execute("COMMIT")
    except BaseException:
        _rollback(connection)
        raise
    return "reinferred" if unchanged else "loaded" if existing is None else "replaced"


def load_into(connection: duckdb.DuckDBPyConnection, bundle: Bundle,
              groups: Groups = None) -> tuple[str, _Loaded | None]:
    """Load a bundle and derive its inference and flags, validating its files as they stream in; return
    (loaded | unchanged | replaced | reinferred, what was loaded). A reinferred bundle was unchanged, but
    its derived rows were recomputed by this method. Raises BundleError when the bundle is refused.

    The run is loaded and derived in the stage (warehouse.attach_stage), where the views see its rows
    alone; the warehouse then takes its rows in one transaction, an INSERT per table, replacing what
    it held of the run, so a refused bundle leaves the warehouse as it was."""
    loaded_at = datetime.now(UTC).replace(tzinfo=None).isoformat()
    key = [bundle.run_id, bundle.host]
    attach_stage(connection)
    warehouse = connection.execute("SELECT current_database()").fetchone()[0]
    existing = connection.execute(sql("ingest/run_content_hash"), key).fetchone()
    unchanged = existing is not None and existing[0] == bundle.content_sha256
    if unchanged and is_current(connection, *key):
        connection.execute(sql("ingest/forget_refusal"), [str(bundle.path)])
        return "unchanged", None
    try:
        with using(connection, STAGE):
            if unchanged:  # loaded by an older inference method: derive it again
                _stage_loaded_run(connection, warehouse, key)
                loaded = None
            else:
                loaded = _insert_bundle(connection, bundle, loaded_at, groups)
            _derive(connection, bundle)
        return _hand_over(connection, bundle, lambda table: f"{quoted(STAGE)}.main.{table}", existing,
                          loaded_at), loaded
    finally:
        _clear_stage(connection)


def _is_storage_failure(error: duckdb.Error) -> bool:
    """A write the warehouse's disk refused (full, over quota, read-only): no bundle's fault."""
    text = str(error)
    return isinstance(error, duckdb.IOException) or any(
        os.strerror(number) in text for number in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO))


def _path_names(path: Path) -> tuple[str | None, str | None]:
    """(run_id, host) as the folder results/<run_id>/<host>/ names them, each None when it does not."""
    run_id, host = path.parent.name, path.name
    return (run_id if re.fullmatch(name_pattern("run_id"), run_id) else None,
            host if re.fullmatch(name_pattern("host"), host) else None)


def record_refusal(connection: duckdb.DuckDBPyConnection, path: Path, reason: str) -> None:
    """Keep a refusal for the fleet page (view refused_bundles) until the folder loads."""
    bundle_path = Path(path).resolve()
    connection.execute(sql("ingest/record_refusal"),
                       [str(bundle_path), *_path_names(bundle_path), _reason(reason),
                        datetime.now(UTC).replace(tzinfo=None).isoformat()])


def forget_vanished_refusals(connection: duckdb.DuckDBPyConnection) -> None:
    """Drop refusals of bundle folders that no longer exist: nothing is left there to fix."""
    for (bundle_path,) in connection.execute(sql("ingest/refused_paths")).fetchall():
        if not Path(bundle_path).is_dir():
            connection.execute(sql("ingest/forget_refusal"), [bundle_path])


def _unchanged(connection: duckdb.DuckDBPyConnection, path: Path) -> bool:
    """The warehouse holds this bundle's run with the same content, derived by this fleetscope's method:
    told from the manifest's bytes and a hash of the files before anything is validated or parsed."""
    stated = stated_content(path)
    if stated is None:
        return False
    run_id, host, content_sha256 = stated
    held = connection.execute(sql("ingest/run_content_hash"), [run_id, host]).fetchone()
    if held is None or held[0] != content_sha256 or not is_current(connection, run_id, host):
        return False
    connection.execute(sql("ingest/forget_refusal"), [str(Path(path).resolve())])
    return True


def _guarded(connection: duckdb.DuckDBPyConnection, path: Path, load: Callable[[], Outcome]) -> Outcome:
    """load(), with a problem of the bundle turned into a REFUSED outcome (and a row of refused_bundles);
    a warehouse that cannot be written raises UserError."""
    try:
        try:
            return load()
        except BundleError as error:
            reason = _reason(str(error))
        except duckdb.Error as error:
            if _is_storage_failure(error):
                raise
            # It passed validation but a value does not fit the warehouse; the transaction was rolled back.
            reason = _reason(f"{path}: could not be stored ({error}); nothing was loaded")
        except Exception as error:  # noqa: BLE001 - what a bundle makes fleetscope trip on refuses it, not the ingest
            reason = _unforeseen(path, error)
        record_refusal(connection, path, reason)
        return Outcome(path, "REFUSED", reason)
    except duckdb.Error as error:
        raise UserError(f"cannot write the warehouse while loading {path} ({error}); nothing of that bundle was "
                        "loaded, the bundles reported before it were: free space (or fix the disk) and run "
                        "`fleetscope ingest` again") from None


def _unforeseen(path: Path, error: Exception) -> str:
    """The reason for a bundle that made fleetscope fail in a way no check foresaw (a check is missing:
    the reason says so, and the other bundles load)."""
    return _reason(f"{path}: fleetscope could not read it ({type(error).__name__}: {str(error)[:300]}); nothing of it "
                   "was loaded: a check fleetscope lacks, please report it with the bundle")


def _unchanged_outcome(path: Path) -> Outcome:
    return Outcome(path, "unchanged", f"run {path.parent.name}, host {path.name}: already loaded, unchanged")


def ingest_bundle(connection: duckdb.DuckDBPyConnection, path: Path, groups: Groups = None) -> Outcome:
    """Validate and load one bundle directory, with its host's inventory groups from `groups` (the
    controller's; None: not recorded); a problem with the bundle becomes a REFUSED outcome (and a row of
    refused_bundles), not an exception. A warehouse that cannot be written raises UserError."""
    def load() -> Outcome:
        if _unchanged(connection, path):
            return _unchanged_outcome(path)
        bundle = open_bundle(path)
        action, loaded = load_into(connection, bundle, groups)
        return _outcome(path, bundle, action, loaded)
    return _guarded(connection, path, load)


# ---- several processes: N validate, load and derive, the one writer hands their rows over ---------------

_WORKER: dict = {}


def _worker_start(folder: str, groups: Groups) -> None:
    """A worker's stage: an in-memory database of its own with the warehouse's schema."""
    connection = duckdb.connect(config={"autoload_known_extensions": False, "autoinstall_known_extensions": False})
    apply_migrations(connection)
    create_views(connection, every=True)
    _WORKER.update(connection=connection, folder=Path(folder), staged=0, groups=groups)


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _worker_stage(path: Path, loaded_at: str) -> tuple[Bundle | None, _Loaded | str, Path | None]:
    """In a worker: validate, load and derive one bundle in the worker's stage and write the staged rows to
    a folder of the shared one, a Parquet file per table (a DuckDB file's checkpoint costs ten times more):
    (bundle, what was loaded, folder), or (None, why it was refused, None)."""
    connection = _WORKER["connection"]
    try:
        bundle = open_bundle(path)
        loaded = _insert_bundle(connection, bundle, loaded_at, _WORKER["groups"])
        _derive(connection, bundle)
        _WORKER["staged"] += 1
        folder = _WORKER["folder"] / f"{os.getpid()}-{_WORKER['staged']}"
        folder.mkdir()
        for table in STAGED_TABLES:
            connection.execute(f"COPY memory.main.{table} TO {_literal(folder / table)} (FORMAT parquet)")
        return bundle, loaded, folder
    except BundleError as error:
        return None, _reason(str(error)), None
    except duckdb.Error as error:
        if _is_storage_failure(error):
            raise
        return None, _reason(f"{path}: could not be stored ({error}); nothing was loaded"), None
    except Exception as error:  # noqa: BLE001 - as in _guarded: the bundle is refused, the ingest goes on
        return None, _unforeseen(path, error), None
    finally:
        for table in STAGED_TABLES:
            connection.execute(f"DELETE FROM memory.main.{table}")


def _hand_over_staged(connection: duckdb.DuckDBPyConnection, path: Path, future: Future, loaded_at: str) -> Outcome:
    def load() -> Outcome:
        bundle, loaded, folder = future.result()
        if bundle is None:
            raise BundleError(loaded)
        try:
            existing = connection.execute(sql("ingest/run_content_hash"), [bundle.run_id, bundle.host]).fetchone()
            if existing is not None and existing[0] == bundle.content_sha256 and \
                    is_current(connection, bundle.run_id, bundle.host):  # named twice in one ingest
                return _unchanged_outcome(path)
            action = _hand_over(connection, bundle, lambda table: f"read_parquet({_literal(folder / table)})",
                                existing, loaded_at)
        finally:
            shutil.rmtree(folder)
        return _outcome(path, bundle, action, loaded if action != "reinferred" else None)
    return _guarded(connection, path, load)


class _Folders:
    """Which folder each (run_id, host) comes from. A bundle's folder is results/<run_id>/<host>/, so two
    folders of one ingest (results/ and old-results/) can hold the same run of the same host: the first
    is loaded, a later one with other content is a conflict, refused, never a second replacement (the last
    folder won, and each ingest replaced the run twice). So is a folder whose run the warehouse holds from
    another folder that is still there, with other content."""

    def __init__(self, connection: duckdb.DuckDBPyConnection):
        self.connection = connection
        self.first: dict[tuple[str, str], Path] = {}

    def conflict(self, path: Path) -> str | None:
        folder = Path(path).resolve()
        key = (folder.parent.name, folder.name)
        first = self.first.setdefault(key, folder)
        if first != folder:
            return self._reason(path, key, first, "given earlier to this ingest")
        held = self.connection.execute(sql("ingest/run_bundle"), list(key)).fetchone()
        if held is not None and Path(held[0]) != folder and (Path(held[0]) / "manifest.json").is_file():
            stated = stated_content(folder)
            if stated is None or stated[2] != held[1]:
                return self._reason(path, key, Path(held[0]), "the warehouse holds the run from")
        return None

    @staticmethod
    def _reason(path: Path, key: tuple[str, str], other: Path, how: str) -> str:
        return _reason(f"{path}: conflict: run {key[0]}, host {key[1]} is also in {other} ({how}): one run of a "
                       "host comes from one folder; remove or move the folder that is not the host's bundle, then "
                       "run `fleetscope ingest` again")


def _refused(connection: duckdb.DuckDBPyConnection, path: Path, reason: str) -> Outcome:
    try:
        record_refusal(connection, path, reason)
    except duckdb.Error as error:
        raise UserError(f"cannot write the warehouse while refusing {path} ({error})") from None
    return Outcome(path, "REFUSED", reason)


def ingest_bundles(connection: duckdb.DuckDBPyConnection, paths: list[Path], jobs: int = 1,
                   groups: Groups = None) -> Iterator[Outcome]:
    """ingest_bundle of every path, in order, with the hosts' inventory groups from `groups` (a folder whose
    run another folder holds is a conflict, _Folders). With jobs > 1, that many worker processes validate, load and derive the bundles (each in a
    stage of its own) while this process, the warehouse's one writer, hands their rows over in order;
    unchanged bundles are told here, without a worker."""
    folders = _Folders(connection)
    if jobs <= 1:
        for path in paths:
            conflict = folders.conflict(path)
            yield _refused(connection, path, conflict) if conflict else ingest_bundle(connection, path, groups)
        return
    loaded_at = datetime.now(UTC).replace(tzinfo=None).isoformat()
    with tempfile.TemporaryDirectory(prefix="fleetscope-ingest-") as folder, \
            ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("forkserver"),
                                initializer=_worker_start, initargs=(folder, groups)) as pool:
        queue: deque[tuple[Path, Future | str | None]] = deque()
        for path in paths:
            conflict = folders.conflict(path)
            queue.append((path, conflict if conflict else None if _unchanged(connection, path) else
                          pool.submit(_worker_stage, path, loaded_at)))
            # at most two bundles a worker staged ahead of the writer
            while queue and (not isinstance(queue[0][1], Future) or queue[0][1].done() or
                             sum(isinstance(pending, Future) for _unused, pending in queue) > 2 * jobs):
                yield _next(connection, queue, loaded_at)
        while queue:
            yield _next(connection, queue, loaded_at)


def _next(connection: duckdb.DuckDBPyConnection, queue: deque, loaded_at: str) -> Outcome:
    path, pending = queue.popleft()
    if pending is None:
        return _unchanged_outcome(path)
    if isinstance(pending, str):
        return _refused(connection, path, pending)
    return _hand_over_staged(connection, path, pending, loaded_at)


def _outcome(path: Path, bundle: Bundle, action: str, loaded: _Loaded | None) -> Outcome:
    where = f"run {bundle.run_id}, host {bundle.host}"
    if action == "unchanged":
        return Outcome(path, action, f"{where}: already loaded, unchanged")
    if action == "reinferred":
        return Outcome(path, "unchanged", f"{where}: already loaded, unchanged; inference and flags recomputed "
                                          f"with method version {INFERENCE_VERSION}")
    experiments = len(bundle.manifest["experiments"])
    status = bundle.manifest.get("status", "status not recorded")
    detail = f"{where} ({status}): {experiments} experiments, {loaded.points} points, {loaded.samples} samples"
    if loaded.raw_outputs:
        detail += f", {loaded.raw_outputs} raw outputs ({loaded.tool_rows} values)"
    return Outcome(path, action, detail)
