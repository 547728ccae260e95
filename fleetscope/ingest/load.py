"""`fleetscope ingest`: validate result bundles and load them into the warehouse, a batch at a time.

Loading is idempotent on (run_id, host): the content hash of the bundle decides whether a bundle
already in the warehouse is left alone (unchanged) or replaced (re-collected with new content); a
signature of its folder's files (bundle.folder_signature, kept in bundle_signatures) tells an unchanged
bundle without reading it. The others of a batch are validated whole, one by one, their rows go into the
stage (an in-memory database beside the warehouse) a few INSERTs per table for the batch, they are derived
there together (each derive query once for the batch: fleetscope.analyze.batch_rows), and the batch's runs
go into the warehouse in one transaction. A problem anywhere in a bundle takes that bundle's rows out of
the stage and refuses it, recorded in bundle_refusals (view refused_bundles) until that folder loads:
a refused bundle leaves the warehouse exactly as it was and costs no other bundle of its batch anything;
only a warehouse that cannot be written (a full disk) stops the ingest.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from fleetscope.ingest import DEFAULT_BATCH
from fleetscope.ingest.bundle import (Bundle, BundleError, Point, folder_signature, name_pattern, open_bundle,
                                      stated_content, utc_timestamp)
from fleetscope.analyze.derive import DERIVED_TABLES, derive_runs
from fleetscope.errors import UserError
from fleetscope.analyze.inference import INFERENCE_VERSION
from fleetscope.store.query import printable
from fleetscope.resources import sql
from fleetscope.store.warehouse import STAGE, attach_stage, detach_stage_schema, insert_rows, quoted, using

# Every table holding rows of one (run_id, host); `hosts` is shared by all runs of a host.
RUN_TABLES = ("tool_samples", "raw_outputs", "point_samples", "points", "plan_experiments", "experiments", "knob_values",
              "cache_levels", "facts", "runs")
# Samples per row of point_samples: a point of millions is cut into rows of this many.
SAMPLE_BATCH = 65536
# The stage takes the waiting bundles' rows (_Rows.due) once they hold 16 x SAMPLE_BATCH samples, or raw
# outputs of this many bytes of the files.
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


def _bundle_rows(bundle: Bundle, loaded_at: str, groups: Groups = None) -> tuple[dict[str, list[dict]], list[dict], _Loaded]:
    """A validated bundle's rows, table by table, its samples as chunks of at most SAMPLE_BATCH consecutive
    samples of one point, and what it holds; raises BundleError before a row of it reaches the warehouse."""
    manifest = bundle.manifest
    key = {"run_id": bundle.run_id, "host": bundle.host}
    tables: dict[str, list[dict]] = {"hosts": [{"host": bundle.host, "first_seen": loaded_at}]}
    tables["runs"] = [{
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
    }]
    tables["facts"] = [{**key, "facts": manifest["facts"]}]
    tables["plan_experiments"] = [{**key, **row} for row in _plan_rows(bundle)]
    tables["cache_levels"] = [{**key, **row} for row in _cache_rows(bundle)]
    tables["knob_values"] = [{**key, **row} for row in _knob_rows(bundle)]

    point_counts: Counter = Counter()
    points, chunks = [], []
    for point in bundle.points():
        point_counts[point.experiment] += 1
        points.append({**key, **_point_row(point)})
        samples = point.document["samples"]
        for first in range(0, len(samples), SAMPLE_BATCH):
            chunks.append({**key, "experiment": point.experiment, "point_index": point.point_index,
                           "first_index": first, "sample_values": samples[first:first + SAMPLE_BATCH]})
    tables["points"] = points
    tables["experiments"] = [{**key, **row} for row in _experiment_rows(bundle, point_counts)]

    raw_outputs, tool_samples = [], []
    for raw in bundle.raw_outputs():
        raw_outputs.append({**key, "experiment": raw.experiment, "path": raw.path, "tool": raw.tool,
                            "sha256": raw.sha256, "bytes": raw.size_bytes, "params": raw.params, "parsed": raw.parsed,
                            "truncated": raw.truncated, "note": raw.note})
        for row_index, row in enumerate(raw.rows):
            tool_samples.append({**key, "experiment": raw.experiment, "path": raw.path, "tool": raw.tool,
                                 "row_index": row_index, "metric": row["metric"], "value": row["value"],
                                 "unit": row["unit"], "params": row["params"]})
    tables["raw_outputs"] = raw_outputs
    tables["tool_samples"] = tool_samples
    loaded = _Loaded(len(points), sum(len(chunk["sample_values"]) for chunk in chunks), len(raw_outputs),
                     len(tool_samples))
    return tables, chunks, loaded


@dataclass(frozen=True)
class _Loaded:
    points: int
    samples: int
    raw_outputs: int
    tool_rows: int


class _Rows:
    """The rows of whole bundles waiting to go into the stage together: one INSERT per table for all of them,
    not one per bundle; a DuckDB statement costs about a millisecond however few rows it carries. `due` says
    when enough waits that it should go (the memory it holds stays bounded)."""

    def __init__(self) -> None:
        self.bundles: list[tuple[tuple[str, str], dict[str, list[dict]], list[dict], int]] = []
        self.samples = self.raw_bytes = 0

    def add(self, key: tuple[str, str], tables: dict[str, list[dict]], chunks: list[dict]) -> None:
        raw_bytes = sum(row["bytes"] or 0 for row in tables["raw_outputs"])
        self.bundles.append((key, tables, chunks, raw_bytes))
        self.samples += sum(len(chunk["sample_values"]) for chunk in chunks)
        self.raw_bytes += raw_bytes

    @property
    def due(self) -> bool:
        return self.samples >= 16 * SAMPLE_BATCH or self.raw_bytes >= RAW_BATCH_BYTES

    def flush(self, connection: duckdb.DuckDBPyConnection) -> list[tuple[tuple[str, str], str]]:
        """Insert every waiting bundle's rows (the connection using the stage). Where a value does not fit the
        warehouse, each bundle goes in alone and those that fail are taken out again: returns (key, DuckDB's
        error) of each such bundle. A disk that refuses the write raises."""
        bundles, self.bundles, self.samples, self.raw_bytes = self.bundles, [], 0, 0
        if not bundles:
            return []
        try:
            _write_rows(connection, bundles)
            return []
        except duckdb.Error as error:
            if _is_storage_failure(error):
                raise
        for key, *_unused in bundles:
            _unstage(connection, key)
        failed = []
        for bundle in bundles:
            try:
                _write_rows(connection, [bundle])
            except duckdb.Error as error:
                if _is_storage_failure(error):
                    raise
                _unstage(connection, bundle[0])
                failed.append((bundle[0], str(error)))
        return failed


def _write_rows(connection: duckdb.DuckDBPyConnection, bundles: list) -> None:
    """Every run table's rows of `bundles` (as _Rows holds them) in one INSERT per table, the hosts first."""
    hosts = {row["host"]: row for _key, tables, _chunks, _bytes in bundles for row in tables["hosts"]}
    connection.execute(sql("ingest/insert_hosts"), [json.dumps(list(hosts.values()))])
    for table in reversed(RUN_TABLES):  # a run's parents first
        insert_rows(connection, table, (row for _key, tables, chunks, _bytes in bundles
                                        for row in (chunks if table == "point_samples" else tables[table])))


def _rollback(connection: duckdb.DuckDBPyConnection) -> None:
    # DuckDB ends the transaction itself when a write fails (a full disk); ROLLBACK would then say
    # "no transaction is active" and hide the real error.
    try:
        connection.execute("ROLLBACK")
    except duckdb.TransactionException:
        pass


def _clear_stage(connection: duckdb.DuckDBPyConnection) -> None:
    """Drop the stage after a batch; the next batch attaches a new one. DuckDB keeps an in-memory table's
    blocks after its rows are deleted, so a stage emptied row by row held its largest batch's memory for the
    rest of the ingest; attaching one costs about what emptying it did (~0.2 s a batch)."""
    connection.execute(f"DETACH {quoted(STAGE)}")


def _stage_loaded_run(connection: duckdb.DuckDBPyConnection, warehouse: str, key: list) -> None:
    """Copy a run already in the warehouse into the stage, to derive it again there."""
    connection.execute(f"INSERT INTO hosts SELECT * FROM {quoted(warehouse)}.main.hosts WHERE host = ? "
                       "ON CONFLICT (host) DO NOTHING", key[1:])
    for table in reversed(RUN_TABLES):
        connection.execute(f"INSERT INTO {table} SELECT * FROM {quoted(warehouse)}.main.{table} "
                           "WHERE run_id = ? AND host = ?", key)


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


def _unforeseen(path: Path, error: Exception) -> str:
    """The reason for a bundle that made fleetscope fail in a way no check foresaw (a check is missing:
    the reason says so, and the other bundles load)."""
    return _reason(f"{path}: fleetscope could not read it ({type(error).__name__}: {str(error)[:300]}); nothing of it "
                   "was loaded: a check fleetscope lacks, please report it with the bundle")


def _unchanged_outcome(path: Path) -> Outcome:
    return Outcome(path, "unchanged", f"run {path.parent.name}, host {path.name}: already loaded, unchanged")


# ---- several processes: N open, validate and build the rows of a batch's bundles; the writer does the rest ----

_WORKER: dict = {}


def _worker_start(groups: Groups) -> None:
    _WORKER.update(groups=groups)


def _worker_rows(path: Path, loaded_at: str) -> tuple[Bundle | None, tuple | str]:
    """In a worker: open and validate one bundle and build its rows, the Python half of what a bundle costs:
    (bundle, (tables, chunks, loaded)), or (None, why it was refused). The writer stages the batch's rows,
    derives them together and hands the batch over, as in one process (a worker that staged and derived each
    bundle alone, one query per run, and wrote its tables to Parquet for the writer, made `--jobs 2` run at a
    third of one process's rate)."""
    try:
        bundle = open_bundle(path)
        return bundle, _bundle_rows(bundle, loaded_at, _WORKER["groups"])
    except BundleError as error:
        return None, _reason(str(error))
    except Exception as error:  # noqa: BLE001 - as in _classified: the bundle is refused, the ingest goes on
        return None, _unforeseen(path, error)


def _refused(connection: duckdb.DuckDBPyConnection, path: Path, reason: str) -> Outcome:
    try:
        record_refusal(connection, path, reason)
    except duckdb.Error as error:
        raise UserError(f"cannot write the warehouse while refusing {path} ({error})") from None
    return Outcome(path, "REFUSED", reason)


class _Folders:
    """Which folder each (run_id, host) comes from. A bundle's folder is results/<run_id>/<host>/, so two
    folders of one ingest (results/ and old-results/) can hold the same run of the same host: the first
    is loaded, a later one with other content is a conflict, refused, never a second replacement (the last
    folder won, and each ingest replaced the run twice). So is a folder whose run the warehouse holds from
    another folder that is still there, with other content."""

    def __init__(self, connection: duckdb.DuckDBPyConnection):
        self.connection = connection
        self.first: dict[tuple[str, str], Path] = {}

    def conflict(self, path: Path, folder: Path, held: _Held | None) -> str | None:
        """Why `path` (resolved: `folder`) conflicts, given what the warehouse holds of its run; None: it does not."""
        key = _key(folder)
        first = self.first.setdefault(key, folder)
        if first != folder:
            return self._reason(path, key, first, "given earlier to this ingest")
        if held is not None and Path(held.bundle_path) != folder and \
                (Path(held.bundle_path) / "manifest.json").is_file():
            stated = stated_content(folder)
            if stated is None or stated[2] != held.content_sha256:
                return self._reason(path, key, Path(held.bundle_path), "the warehouse holds the run from")
        return None

    @staticmethod
    def _reason(path: Path, key: tuple[str, str], other: Path, how: str) -> str:
        return _reason(f"{path}: conflict: run {key[0]}, host {key[1]} is also in {other} ({how}): one run of a "
                       "host comes from one folder; remove or move the folder that is not the host's bundle, then "
                       "run `fleetscope ingest` again")


# ---- one batch: told unchanged by the folders' signatures, staged and derived, handed over in one transaction ----

@dataclass(frozen=True)
class _Held:
    """What the warehouse holds of a run a bundle folder names (ingest/held_runs.sql)."""
    bundle_path: str
    content_sha256: str
    inference_version: int | None
    signed_path: str | None
    signature: str | None
    signed_content_sha256: str | None

    @property
    def current(self) -> bool:
        return self.inference_version == INFERENCE_VERSION

    def signed_as(self, folder: Path, signature: str | None) -> bool:
        """The folder's files look as they did when this run's content was read from them."""
        return (signature is not None and self.signature == signature and self.signed_path == str(folder)
                and self.signed_content_sha256 == self.content_sha256)


@dataclass
class _Pending:
    """A bundle of the batch to validate, load and derive."""
    index: int
    path: Path
    folder: Path
    held: _Held | None
    signature: str | None
    future: Future | None = None


@dataclass(frozen=True)
class _Staged:
    pending: _Pending
    bundle: Bundle
    loaded: _Loaded | None
    action: str  # loaded | replaced | reinferred


class _Refused(Exception):
    """A bundle of the batch is refused: its reason, as stored and printed."""


def _keys_json(keys: Iterable[tuple[str, str]]) -> str:
    return json.dumps([{"run_id": run_id, "host": host} for run_id, host in keys])


def _key(folder: Path) -> tuple[str, str]:
    return folder.parent.name, folder.name


def _held_runs(connection: duckdb.DuckDBPyConnection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], _Held]:
    return {(row[0], row[1]): _Held(*row[2:])
            for row in connection.execute(sql("ingest/held_runs"), [_keys_json(keys)]).fetchall()}


def _chunks(paths: list[Path], size: int) -> Iterator[list[tuple[Path, Path]]]:
    """(path, its resolved folder) in batches of at most `size`, a batch ending before a run it already names
    (a folder given twice is told unchanged in the next batch, once the first is in the warehouse)."""
    chunk: list[tuple[Path, Path]] = []
    keys: set[tuple[str, str]] = set()
    for path in paths:
        folder = Path(path).resolve()
        if len(chunk) >= size or _key(folder) in keys:
            yield chunk
            chunk, keys = [], set()
        chunk.append((path, folder))
        keys.add(_key(folder))
    if chunk:
        yield chunk


def _classified(path: Path, call: Callable[[], object]) -> object:
    """call(), with what the bundle makes fail turned into _Refused (as ingest has always told them apart); a
    warehouse that cannot be written raises on."""
    try:
        return call()
    except BundleError as error:
        raise _Refused(_reason(str(error))) from None
    except duckdb.Error as error:
        if _is_storage_failure(error):
            raise
        # it passed validation but a value does not fit the warehouse
        raise _Refused(_reason(f"{path}: could not be stored ({error}); nothing was loaded")) from None
    except Exception as error:  # noqa: BLE001 - what a bundle makes fleetscope trip on refuses it, not the ingest
        raise _Refused(_unforeseen(path, error)) from None


def _unstage(connection: duckdb.DuckDBPyConnection, key: tuple[str, str]) -> None:
    """Take a refused bundle's rows out of the stage; the batch's other runs stay."""
    for table in (*RUN_TABLES, *DERIVED_TABLES):
        connection.execute(f"DELETE FROM {quoted(STAGE)}.main.{table} WHERE run_id = ? AND host = ?", list(key))


def _action(pending: _Pending, bundle: Bundle) -> str:
    held = pending.held
    return ("loaded" if held is None else "reinferred" if held.content_sha256 == bundle.content_sha256
            else "replaced")


def _stage_batch(connection: duckdb.DuckDBPyConnection, pending: list[_Pending], warehouse: str, loaded_at: str,
                 groups: Groups, refusals: list[tuple[int, str]]) -> list[_Staged]:
    """Validate the batch's bundles one by one, load their rows into the stage a few INSERTs per table for
    all of them (_Rows), and derive them there together (derive_runs: each derive query once for the
    batch). A bundle refused at any step is taken out of the stage whole and added to `refusals`; the
    others stay. Returns the staged runs, in order."""
    rows = _Rows()
    opened: dict[tuple[str, str], tuple[_Pending, Bundle, _Loaded | None]] = {}

    def refuse_failed(failed: list[tuple[tuple[str, str], str]]) -> None:
        for key, error in failed:
            item = opened.pop(key)[0]
            refusals.append((item.index, _reason(f"{item.path}: could not be stored ({error}); nothing was loaded")))

    with using(connection, STAGE):
        for item in pending:
            try:
                built = None
                if item.future is not None:  # a worker opened it and built its rows (--jobs)
                    bundle, built = item.future.result()
                    if bundle is None:
                        raise _Refused(built)
                else:
                    bundle = _classified(item.path, lambda item=item: open_bundle(item.path))
                key = (bundle.run_id, bundle.host)
                if _action(item, bundle) == "reinferred":  # loaded by an older inference method: derive it again
                    try:
                        _classified(item.path, lambda key=key: _stage_loaded_run(connection, warehouse, list(key)))
                    except _Refused:
                        _unstage(connection, key)
                        raise
                    loaded = None
                else:
                    tables, chunks, loaded = built or _classified(
                        item.path, lambda bundle=bundle: _bundle_rows(bundle, loaded_at, groups))
                    rows.add(key, tables, chunks)
                opened[key] = (item, bundle, loaded)
            except _Refused as refusal:
                refusals.append((item.index, str(refusal)))
            if rows.due:
                refuse_failed(rows.flush(connection))
        refuse_failed(rows.flush(connection))
        for key, error in derive_runs(connection, list(opened)).items():
            item, bundle, _loaded = opened.pop(key)
            _unstage(connection, key)
            if isinstance(error, duckdb.Error):
                if _is_storage_failure(error):
                    raise error
                refusals.append((item.index, _reason(f"{item.path}: could not be stored ({error}); nothing was "
                                                     "loaded")))
            else:
                refusals.append((item.index, _reason(
                    f"{bundle.path}: its points passed validation but deriving the hierarchy and flags from them "
                    f"failed ({type(error).__name__}: {str(error)[:200]}); nothing of it was loaded")))
    return [_Staged(item, bundle, loaded, _action(item, bundle)) for item, bundle, loaded in opened.values()]


def _hand_over(connection: duckdb.DuckDBPyConnection, staged: list[_Staged], forget: list[str], signed: list[dict],
               loaded_at: str) -> None:
    """In one transaction, the staged runs replace what the warehouse held of them (a run derived again only
    its derived rows), the refusals of `forget` go and the folders' signatures are kept. Only runs the
    warehouse held when the batch began (_Held: a runs row; a run's rows come and go with it, in one
    transaction, and this process is the one writer) have rows to delete: a batch of new runs deletes nothing,
    so its cost does not grow with the warehouse (each DELETE reads its whole table)."""
    whole = _keys_json(sorted((item.bundle.run_id, item.bundle.host) for item in staged if item.action != "reinferred"))
    derived = _keys_json(sorted((item.bundle.run_id, item.bundle.host) for item in staged))
    held = [item for item in staged if item.pending.held is not None]
    connection.execute("BEGIN TRANSACTION")
    try:
        if forget:
            connection.execute(sql("ingest/forget_refusals"), [json.dumps(forget)])
        if held:
            held_whole = _keys_json(sorted((item.bundle.run_id, item.bundle.host) for item in held
                                           if item.action != "reinferred"))
            held_derived = _keys_json(sorted((item.bundle.run_id, item.bundle.host) for item in held))
            for table in (*RUN_TABLES, *DERIVED_TABLES):
                connection.execute(sql("ingest/delete_runs").format(table=table),
                                   [held_derived if table in DERIVED_TABLES else held_whole])
        if staged:
            connection.execute(sql("ingest/hosts_from_stage"), [loaded_at, whole])
            for table in (*reversed(RUN_TABLES), *DERIVED_TABLES):  # a run's parents first
                connection.execute(sql("ingest/hand_over_runs").format(table=table,
                                                                       staged=f"{quoted(STAGE)}.main.{table}"),
                                   [derived if table in DERIVED_TABLES else whole])
        if signed:
            connection.execute(sql("ingest/sign_bundles"), [json.dumps(signed)])
        connection.execute("COMMIT")
    except BaseException:
        _rollback(connection)
        raise


def _signed(folder: Path, signature: str | None, content_sha256: str) -> list[dict]:
    if signature is None:
        return []
    run_id, host = _key(folder)
    return [{"run_id": run_id, "host": host, "bundle_path": str(folder), "signature": signature,
             "content_sha256": content_sha256}]


@dataclass
class _Batch:
    """A batch told apart (_prepare_batch): what is unchanged or refused already, and what is left to load."""
    chunk: list[tuple[Path, Path]]
    loaded_at: str
    outcomes: list[Outcome | None]
    refusals: list[tuple[int, str]]
    forget: list[str]
    signed: list[dict]
    pending: list[_Pending]


def _chunk_keys(chunk: list[tuple[Path, Path]]) -> list[tuple[str, str]]:
    """The (run_id, host) each bundle folder of a batch names."""
    return [_key(folder) for _unused, folder in chunk]


def _prepare_batch(connection: duckdb.DuckDBPyConnection, chunk: list[tuple[Path, Path]], folders: _Folders,
                   pool: ProcessPoolExecutor | None) -> _Batch:
    """Tell a batch's unchanged bundles (by their folders' signatures or content hash) and conflicts from those
    to load; with a pool, hand those to the workers to open and validate (their futures)."""
    loaded_at = datetime.now(UTC).replace(tzinfo=None).isoformat()
    held = _held_runs(connection, _chunk_keys(chunk))
    refused_before = {path for (path,) in connection.execute(
        sql("ingest/refused_among"), [json.dumps([str(folder) for _unused, folder in chunk])]).fetchall()}
    outcomes: list[Outcome | None] = [None] * len(chunk)
    refusals: list[tuple[int, str]] = []
    forget: list[str] = []
    signed: list[dict] = []
    pending: list[_Pending] = []
    for index, (path, folder) in enumerate(chunk):
        run = held.get(_key(folder))
        conflict = folders.conflict(path, folder, run)
        if conflict:
            refusals.append((index, conflict))
            continue
        signature = folder_signature(folder)
        if run is not None and run.current:
            unchanged = run.signed_as(folder, signature)
            if not unchanged:  # read and hash the files it names, as open_bundle would
                stated = stated_content(folder)
                unchanged = stated is not None and stated[2] == run.content_sha256
                if unchanged:
                    signed += _signed(folder, signature, run.content_sha256)
            if unchanged:
                outcomes[index] = _unchanged_outcome(path)
                if str(folder) in refused_before:
                    forget.append(str(folder))
                continue
        pending.append(_Pending(index, path, folder, run, signature))

    if pool is not None:
        for item in pending:
            item.future = pool.submit(_worker_rows, item.path, loaded_at)
    return _Batch(chunk, loaded_at, outcomes, refusals, forget, signed, pending)


def _finish_batch(connection: duckdb.DuckDBPyConnection, batch: _Batch, groups: Groups) -> Iterator[Outcome]:
    """The outcomes of a prepared batch, in order, once the batch is in the warehouse. A warehouse that
    cannot be written raises UserError after the outcomes of the bundles before the one it failed on."""
    chunk, loaded_at, pending = batch.chunk, batch.loaded_at, batch.pending
    outcomes, refusals, forget, signed = batch.outcomes, batch.refusals, batch.forget, batch.signed
    staged: list[_Staged] = []
    if pending:
        attach_stage(connection)
    warehouse = connection.execute("SELECT current_database()").fetchone()[0]
    failed = None
    try:
        if pending:
            staged = _stage_batch(connection, pending, warehouse, loaded_at, groups, refusals)
        failed = _hand_over_all(connection, staged, forget, signed, refusals, loaded_at)
    except duckdb.Error as error:
        raise UserError(f"cannot write the warehouse while loading the batch of {chunk[0][0]} .. {chunk[-1][0]} "
                        f"({error}); nothing of that batch was loaded, the bundles reported before it were: free "
                        "space (or fix the disk) and run `fleetscope ingest` again") from None
    finally:
        if pending:
            _clear_stage(connection)
    for item in staged:
        outcomes[item.pending.index] = _outcome(item.pending.path, item.bundle, item.action, item.loaded)
    for index, reason in sorted(refusals):
        if failed is None or index < failed[0]:
            outcomes[index] = _refused(connection, chunk[index][0], reason)
    for index, outcome in enumerate(outcomes):
        if failed is not None and index >= failed[0]:
            raise UserError(f"cannot write the warehouse while loading {chunk[index][0]} ({failed[1]}); nothing of "
                            "that bundle was loaded, the bundles reported before it were: free space (or fix the "
                            "disk) and run `fleetscope ingest` again")
        yield outcome


def _hand_over_all(connection: duckdb.DuckDBPyConnection, staged: list[_Staged], forget: list[str],
                   signed: list[dict], refusals: list[tuple[int, str]], loaded_at: str) -> tuple[int, Exception] | None:
    """The batch in one transaction. Where that fails, each run in a transaction of its own, in order: a row
    no bundle's stage found fault with that does not fit the warehouse refuses only the bundle it came from
    (taken out of `staged`, added to `refusals`), and a disk that fills keeps the runs handed over before it.
    Returns (the batch index of the bundle the warehouse could not be written for, the error), or None."""
    def signatures(items: list[_Staged]) -> list[dict]:
        return [row for item in items
                for row in _signed(item.pending.folder, item.pending.signature, item.bundle.content_sha256)]
    try:
        _hand_over(connection, staged, forget + [str(item.pending.folder) for item in staged],
                   signed + signatures(staged), loaded_at)
        return None
    except duckdb.Error:
        pass
    _hand_over(connection, [], forget, signed, loaded_at)
    for item in list(staged):
        try:
            _hand_over(connection, [item], [str(item.pending.folder)], signatures([item]), loaded_at)
        except duckdb.Error as error:
            if _is_storage_failure(error):
                del staged[staged.index(item):]
                return item.pending.index, error
            staged.remove(item)
            refusals.append((item.pending.index, _reason(f"{item.pending.path}: could not be stored ({error}); "
                                                         "nothing was loaded")))
    return None


def ingest_bundles(connection: duckdb.DuckDBPyConnection, paths: list[Path], jobs: int = 1,
                   groups: Groups = None, batch: int = DEFAULT_BATCH) -> Iterator[Outcome]:
    """ingest_bundle of every path, in order, with the hosts' inventory groups from `groups` (a folder whose
    run another folder holds is a conflict, _Folders), `batch` bundles at a time: a batch's unchanged bundles
    are told by their folders' signatures (folder_signature) or, failing that, their content hash; the others
    are validated, loaded and derived in the stage, and the batch goes into the warehouse in one transaction.
    A bundle refused leaves the stage as it was, so it costs the batch nothing else. With jobs > 1, that many
    worker processes open and validate the bundles and build their rows, a batch ahead, while this process, the
    warehouse's one writer, stages, derives and hands over the batch before. Each batch's outcomes come once it
    is in the warehouse."""
    if batch < 1:
        raise ValueError(f"a batch holds at least one bundle, not {batch}")
    folders = _Folders(connection)
    with ExitStack() as stack:
        pool = None
        if jobs > 1:
            pool = stack.enter_context(ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("forkserver"),
                                                           initializer=_worker_start, initargs=(groups,)))
        stack.callback(detach_stage_schema, connection)
        previous: _Batch | None = None
        for chunk in _chunks(paths, batch):
            # With workers, the next batch goes to them before this process stages and derives the one before,
            # so that both halves run at once; not when it names a run of that batch, which must be in the
            # warehouse first (a folder given twice is told unchanged).
            if previous is not None and (pool is None or set(_chunk_keys(previous.chunk)) & set(_chunk_keys(chunk))):
                yield from _finish_batch(connection, previous, groups)
                previous = None
            current = _prepare_batch(connection, chunk, folders, pool)
            if previous is not None:
                yield from _finish_batch(connection, previous, groups)
            previous = current
        if previous is not None:
            yield from _finish_batch(connection, previous, groups)


def ingest_bundle(connection: duckdb.DuckDBPyConnection, path: Path, groups: Groups = None) -> Outcome:
    """Validate and load one bundle directory, with its host's inventory groups from `groups` (the
    controller's; None: not recorded); a problem with the bundle becomes a REFUSED outcome (and a row of
    refused_bundles), not an exception. A warehouse that cannot be written raises UserError."""
    return next(ingest_bundles(connection, [path], groups=groups))


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
