"""Open the DuckDB warehouse: writers bring its schema up to date, readers only read it.

The schema lives in warehouse/: numbered migrations (applied once each, recorded in schema_migrations)
and one view per file (created by writers, each recorded in schema_views with the sha256 of its file,
and re-created when that file changes). Only writers (ingest, import, migrate) change the file.
Readers (query, report, export, the notebooks) open it read-only with DuckDB's external access off,
so they never change its bytes and SQL typed into `fleetscope query` cannot read or write other files,
attach databases or load extensions; a reader finds a warehouse written by an older fleetscope and
says to run `fleetscope migrate`. Every opener refuses a warehouse from a newer fleetscope, naming
both versions.

DuckDB lets one process write a file at a time, so opening waits a while for another writer to
finish instead of failing at once.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
import time
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import takewhile
from pathlib import Path

import duckdb
import msgspec

from fleetscope.errors import UserError
from fleetscope.resources import WAREHOUSE_DIR, sql

MIGRATIONS_DIR = WAREHOUSE_DIR / "migrations"
VIEWS_DIR = WAREHOUSE_DIR / "views"
DEFAULT_DB = Path("warehouse/fleet.duckdb")
DEFAULT_LOCK_WAIT_S = 60.0

_MIGRATION_NAME = re.compile(r"(\d{3})_[a-z0-9_]+\.sql")
# The writer's page cache: DuckDB keeps every block it has read or written until its memory limit (80% of RAM by
# default), so an ingest's memory grew with the warehouse, not with what it loads (peak RSS 231, 475 and 1,312 MB
# at 10, 100 and 1,000 hosts in benchmarks/ingest_scale.py). Capped, older blocks are dropped and read again
# from the file (the OS caches it): 598 MB at 1,000 hosts with 256 MB, 830 with 512, at the same rate (5.2-5.4
# bundles/s, 5.0 uncapped). Primary-key checks load their index lazily (2 MB of ART for an insert into a
# 400-host warehouse capped at 32 MB); a query larger than the cap spills to DuckDB's temporary folder.
WRITER_MEMORY_LIMIT = "512MB"
# How much WAL the writer lets grow before DuckDB checkpoints it into the file. A checkpoint costs more the larger
# the warehouse (it writes the tables' metadata and primary-key indexes again): at DuckDB's 16 MB one ran after
# nearly every batch of 32 bundles, and handing a batch over took 40 ms a bundle at 600 hosts against 15 at 20.
# At 256 MB ingest held 8.1 bundles/s from 100 to 1,000 hosts where it fell from 8.2 to 6.5, with a lower peak
# RSS (759 MB against 846) and a smaller file (benchmarks/ingest_scale.py). A writer that dies leaves at most this
# much WAL, which the next opener replays.
WRITER_CHECKPOINT_THRESHOLD = "256MB"
# Every reader opens with the same settings, so two readers in one process (marimo sessions) share DuckDB's
# instance; the sandbox (_SANDBOX) is then set on the running instance, and lock_configuration keeps a
# query from SETting it back.
_NO_EXTERNAL_ACCESS = {"autoload_known_extensions": False, "autoinstall_known_extensions": False,
                       "allow_community_extensions": False}
# DuckDB lets a database reach its own files with external access off (the file, its WAL, its temporary
# folder: `COPY ... TO '<db>.wal'` cut a WAL to 4 bytes, read_blob('<db>') read the file), so a reader also
# turns the local file system off once the file is open: what it opened stays readable, nothing else is.
# (in this order: DuckDB checks the file system when external access is set)
_SANDBOX = ("enable_external_access = false", "disabled_filesystems = 'LocalFileSystem'", "lock_configuration = true")
# DuckDB says this, and only this, when another process holds the file ("in block at location" of a
# checksum error also contains "lock").
_LOCK_HELD = "Could not set lock on file"
_CORRUPT = re.compile(r"corrupt|checksum|not a valid DuckDB database file", re.IGNORECASE)


def migrations() -> list[tuple[int, Path]]:
    """The migration files in the order they apply, as (version, path)."""
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        match = _MIGRATION_NAME.fullmatch(path.name)
        if match is None:
            raise RuntimeError(f"{path}: migration files are named NNN_description.sql")
        found.append((int(match.group(1)), path))
    versions = [version for version, _unused in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"{MIGRATIONS_DIR}: two migrations share a number")
    return found


def schema_version() -> int:
    return max(version for version, _unused in migrations())


def _view_hashes() -> dict[str, str]:
    """Each view file's name (the view's name) and the sha256 of its text."""
    return {path.stem: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(VIEWS_DIR.glob("*.sql"))}


def _connect(db_path: Path, lock_wait_s: float, *, read_only: bool, config: dict) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + lock_wait_s
    told = False
    while True:
        try:
            return duckdb.connect(str(db_path), read_only=read_only, config=config)
        except duckdb.IOException as error:
            if _LOCK_HELD not in str(error):
                raise storage_error(db_path, error) from None
            holder = re.search(r"\(PID (\d+)\)", str(error))
            who = f"process {holder.group(1)}" if holder else "another process"
            if time.monotonic() >= deadline:
                raise UserError(
                    f"warehouse {db_path} is in use by {who} and stayed locked for {lock_wait_s:g} s: "
                    "wait for the other ingest/report/duckdb session to finish, or raise --lock-wait"
                ) from None
            if not told and lock_wait_s > 0:
                print(f"fleetscope: warehouse {db_path} is in use by {who} (an ingest, or a DuckDB session); "
                      f"waiting up to {lock_wait_s:g} s for it (--lock-wait)", file=sys.stderr, flush=True)
                told = True
            time.sleep(0.25)
        except duckdb.Error as error:
            # e.g. a file that is not a DuckDB database, or one this process holds with other settings
            raise UserError(f"cannot open warehouse {db_path}: {error}") from None


def is_corrupt(error: Exception) -> bool:
    """Whether DuckDB's error says the file's bytes are damaged (a checksum that does not match)."""
    return isinstance(error, duckdb.Error) and bool(_CORRUPT.search(str(error)))


def storage_error(db_path: Path, error: Exception) -> UserError:
    """What to tell the user of a warehouse DuckDB cannot read or write: a damaged file and how to get it
    back, or the error as DuckDB gives it."""
    if is_corrupt(error):
        return UserError(f"warehouse {db_path} is corrupt ({str(error)[:300]}): move it aside (mv {db_path} "
                         f"{db_path}.corrupt) and load the bundles into a new one with `fleetscope ingest results/` "
                         "(the bundles are the warehouse's source), or restore it from a backup")
    return UserError(f"cannot use warehouse {db_path}: {str(error)[:500]}")


def _has_table(connection: duckdb.DuckDBPyConnection, table: str) -> bool:
    return connection.execute(sql("warehouse/has_table"), [table]).fetchone()[0] > 0


def _applied(connection: duckdb.DuckDBPyConnection) -> dict[int, str]:
    """The migrations recorded in the file, version -> file name (empty for a new file)."""
    if not _has_table(connection, "schema_migrations"):
        return {}
    return dict(connection.execute(sql("warehouse/applied_migrations")).fetchall())


def _refuse_newer(applied: dict[int, str], db_path: Path) -> None:
    known = {version for version, _unused in migrations()}
    unknown = sorted(set(applied) - known)
    if unknown:
        raise UserError(
            f"warehouse {db_path} has schema version {max(applied)} (it holds migration {applied[unknown[-1]]}, "
            f"which this fleetscope does not know); this fleetscope reads schema version {max(known)}: "
            "use the fleetscope that wrote it, or a newer one"
        )


def apply_migrations(connection: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply the migrations not yet recorded; return the versions applied now."""
    connection.execute(sql("warehouse/create_schema_migrations"))
    applied = _applied(connection)
    newly_applied = []
    for version, path in migrations():
        if version in applied:
            continue
        connection.execute("BEGIN TRANSACTION")
        try:
            connection.execute(path.read_text(encoding="utf-8"))
            connection.execute(sql("warehouse/record_migration"), [version, path.name])
            connection.execute("COMMIT")
        except duckdb.Error:
            connection.execute("ROLLBACK")
            raise
        newly_applied.append(version)
    return newly_applied


def create_views(connection: duckdb.DuckDBPyConnection, *, every: bool = False) -> None:
    """(Re)create the views whose file changed since it was recorded in schema_views, or that are
    missing (all of them when `every`), and record their hashes; a view that reads another is retried
    once the other exists, or has the columns it reads. A view fleetscope recorded earlier whose file is gone is dropped."""
    hashes = _view_hashes()
    recorded = dict(connection.execute(sql("warehouse/recorded_view_hashes")).fetchall())
    existing = {name for (name,) in connection.execute(sql("warehouse/existing_views")).fetchall()}
    for name in recorded.keys() - hashes.keys():
        if re.fullmatch(r"[a-z0-9_]+", name):
            connection.execute(f'DROP VIEW IF EXISTS "{name}"')
            connection.execute(sql("warehouse/forget_view"), [name])
    changed = [name for name, digest in hashes.items() if every or recorded.get(name) != digest or name not in existing]
    pending = [VIEWS_DIR / f"{name}.sql" for name in changed]
    while pending:
        failed: list[tuple[Path, duckdb.Error]] = []
        for path in pending:
            try:
                connection.execute(path.read_text(encoding="utf-8"))
            except (duckdb.CatalogException, duckdb.BinderException) as error:
                # a view it reads is missing, or lacks a column until that view is created again in this pass
                failed.append((path, error))
        if len(failed) == len(pending):
            path, error = failed[0]
            raise RuntimeError(f"{path}: {error}")
        pending = [path for path, _unused in failed]
    if changed:
        connection.execute(sql("warehouse/record_views"), [changed, [hashes[name] for name in changed]])


def data_dictionary(text: str | None = None) -> dict[str, tuple[str, dict[str, str]]]:
    """The descriptions of the data dictionary (warehouse/README.md, or `text`): for each "### `name`"
    section, the relation's description (the prose before its column table, one line) and each column's
    meaning with its unit in brackets. Markdown backticks are dropped."""
    text = (WAREHOUSE_DIR / "README.md").read_text(encoding="utf-8") if text is None else text
    dictionary = {}
    for name, body in re.findall(r"^### `(\w+)`\n(.*?)(?=^#{2,3} |\Z)", text, flags=re.MULTILINE | re.DOTALL):
        prose_lines = takewhile(lambda line: not line.startswith("|"), body.splitlines())
        prose = " ".join(line.strip() for line in prose_lines if line.strip())
        columns = {}
        for cells in re.findall(r"^\| `(\w+)` \|([^\n]*)$", body, flags=re.MULTILINE):
            column, rest = cells
            fields = [field.strip() for field in rest.strip().removesuffix("|").split("|", 2)]
            if len(fields) == 3 and fields[2]:
                unit, meaning = fields[1], fields[2]
                columns[column] = (meaning + (f" [{unit}]" if unit else "")).replace("`", "")
        dictionary[name] = (prose.replace("`", ""), columns)
    return dictionary


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def apply_comments(connection: duckdb.DuckDBPyConnection) -> int:
    """Give every table, view and column the data dictionary describes its description as a DuckDB
    COMMENT (shown by duckdb_tables(), duckdb_views(), duckdb_columns()), setting only those that differ,
    so a warehouse already up to date is not written. Returns how many comments were set."""
    dictionary = data_dictionary()
    relations = {name: (kind, comment) for name, kind, comment in connection.execute(sql("warehouse/relation_comments")).fetchall()}
    statements = []
    for name, (kind, comment) in relations.items():
        if name in dictionary and dictionary[name][0] and comment != dictionary[name][0]:
            statements.append(f'COMMENT ON {kind} "{name}" IS {_quote(dictionary[name][0])}')
    for table, column, comment in connection.execute(sql("warehouse/column_comments")).fetchall():
        wanted = dictionary.get(table, ("", {}))[1].get(column)
        if wanted and comment != wanted:
            statements.append(f'COMMENT ON COLUMN "{table}"."{column}" IS {_quote(wanted)}')
    if statements:
        # one transaction: each statement committed alone costs a commit of its own (some 900 on a new file)
        connection.execute("BEGIN TRANSACTION")
        try:
            for statement in statements:
                connection.execute(statement)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    return len(statements)


def open_warehouse(
    db_path: Path, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S, create: bool = True, every_view: bool = False
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse for writing (creating it and its parent folders if `create`) and bring its
    schema up to date: the migrations it lacks, the views whose files changed (every view if
    `every_view`), and the data dictionary's descriptions as comments."""
    db_path = Path(db_path)
    if not db_path.exists():
        if not create:
            raise UserError(f"no warehouse at {db_path}: load bundles first with `fleetscope ingest`")
        db_path.parent.mkdir(parents=True, exist_ok=True)
    connection = _connect(db_path, lock_wait_s, read_only=False,
                          config={**_NO_EXTERNAL_ACCESS, "memory_limit": WRITER_MEMORY_LIMIT,
                                  "checkpoint_threshold": WRITER_CHECKPOINT_THRESHOLD})
    try:
        _refuse_newer(_applied(connection), db_path)
        apply_migrations(connection)
        create_views(connection, every=every_view)
        apply_comments(connection)
    except duckdb.Error as error:  # a damaged file, a full disk while the schema is written
        connection.close()
        raise storage_error(db_path, error) from None
    except BaseException:
        connection.close()
        raise
    return connection


def _schema_lag(connection: duckdb.DuckDBPyConnection) -> str | None:
    """What an older writer left behind in the file, or None when its schema is this fleetscope's."""
    applied = _applied(connection)
    missing = [path.name for version, path in migrations() if version not in applied]
    if missing:
        return (f"has schema version {max(applied, default=0)} and this fleetscope reads {schema_version()} "
                f"(missing {', '.join(missing)})")
    recorded = dict(connection.execute(sql("warehouse/recorded_view_hashes")).fetchall())
    stale = [name for name, digest in _view_hashes().items() if recorded.get(name) != digest]
    if stale:
        return f"has views written by another fleetscope version ({', '.join(stale)})"
    return None


def open_read_only(db_path: Path, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S,
                   writable_directory: Path | None = None) -> duckdb.DuckDBPyConnection:
    """Open an existing warehouse for reading only, with no access to any file but what it opened — its own
    WAL and the file itself included — nor to databases or extensions (except writing under
    `writable_directory`, for `export`, whose SQL is fleetscope's own). Refuses a warehouse whose schema is
    older or newer than this fleetscope's; the file's bytes are never changed and no file is written."""
    db_path = Path(db_path)
    if not db_path.is_file():
        raise UserError(f"no warehouse at {db_path}: load bundles first with `fleetscope ingest`")
    connection = _connect(db_path, lock_wait_s, read_only=True, config=_NO_EXTERNAL_ACCESS)
    try:
        if writable_directory is None:
            _sandbox(connection)
        else:
            # allowed_directories can only be set on a running database, before external access is cut
            connection.execute("SET allowed_directories = ?", [[f"{Path(writable_directory).resolve()}/"]])
            for setting in ("enable_external_access = false", "lock_configuration = true"):
                connection.execute(f"SET {setting}")
        _refuse_newer(_applied(connection), db_path)
        lag = _schema_lag(connection)
        if lag:
            raise UserError(f"warehouse {db_path} {lag}: run `fleetscope migrate --db {db_path}` "
                            "(or `fleetscope ingest`), then try again")
    except duckdb.Error as error:
        connection.close()
        raise storage_error(db_path, error) from None
    except BaseException:
        connection.close()
        raise
    return connection


def _sandbox(connection: duckdb.DuckDBPyConnection) -> None:
    """Cut a reader off from every file (_SANDBOX), once per DuckDB instance: a second reader of the same
    file in this process shares the instance, already cut off and locked."""
    locked = connection.execute(sql("warehouse/setting"), ["lock_configuration"]).fetchone()
    if locked is not None and locked[0] == "true":
        return
    for setting in _SANDBOX:
        connection.execute(f"SET {setting}")


# The in-memory database a writer stages a batch of runs in (attach_stage).
STAGE = "stage"
# The empty database each stage's tables and views are copied from (attach_stage).
STAGE_SCHEMA = "stage_schema"


def quoted(name: str) -> str:
    """A DuckDB identifier (a database, table or column name) quoted for SQL text."""
    return '"' + name.replace('"', '""') + '"'


@contextmanager
def using(connection: duckdb.DuckDBPyConnection, database: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """Unqualified names (tables, views, the queries of warehouse/queries) mean `database`'s while inside."""
    previous = connection.execute("SELECT current_database()").fetchone()[0]
    connection.execute(f"USE {quoted(database)}")
    try:
        yield connection
    finally:
        connection.execute(f"USE {quoted(previous)}")


def attach_stage(connection: duckdb.DuckDBPyConnection) -> None:
    """Attach an empty in-memory database named STAGE with the warehouse's schema, tables and views (once
    per connection). Ingest loads and derives a batch's runs there, where every view and query sees those runs'
    rows alone, so its cost follows the batch and not the warehouse; the rows then go over in one INSERT per
    table. The schema is built once per connection, by the migrations and views, in an empty database
    STAGE_SCHEMA, and each stage copies it from there (COPY FROM DATABASE ... (SCHEMA): ~10 ms, where running
    the migrations and creating the views took ~0.35 s a batch); detach_stage_schema drops it."""
    attached = {name for (name,) in connection.execute(
        "SELECT database_name FROM duckdb_databases() WHERE database_name IN (?, ?)", [STAGE, STAGE_SCHEMA]).fetchall()}
    if STAGE in attached:
        return
    if STAGE_SCHEMA not in attached:
        connection.execute(f"ATTACH ':memory:' AS {quoted(STAGE_SCHEMA)}")
        with using(connection, STAGE_SCHEMA):
            apply_migrations(connection)
            create_views(connection, every=True)
    connection.execute(f"ATTACH ':memory:' AS {quoted(STAGE)}")
    connection.execute(f"COPY FROM DATABASE {quoted(STAGE_SCHEMA)} TO {quoted(STAGE)} (SCHEMA)")


def detach_stage_schema(connection: duckdb.DuckDBPyConnection) -> None:
    """Drop the schema attach_stage copies each stage from, once the ingest is done with the connection. An
    ingest that stops on a failed write keeps that error: the connection goes, and the schema (empty, in
    memory) with it."""
    try:
        connection.execute(f"DETACH DATABASE IF EXISTS {quoted(STAGE_SCHEMA)}")
    except duckdb.Error:
        pass


@contextmanager
def open_snapshot(db_path: Path, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S) -> Iterator[duckdb.DuckDBPyConnection]:
    """open_read_only on a copy of the warehouse taken while holding it, removed afterwards: a reader that
    takes minutes (`report` of a large fleet) holds the file only while it is copied, so an ingest started
    meanwhile waits seconds, not the whole report. Where the copy cannot be made (no room in $TMPDIR),
    it reads the warehouse in place and says so."""
    db_path = Path(db_path)
    with tempfile.TemporaryDirectory(prefix="fleetscope-snapshot-") as folder:
        copy = Path(folder) / db_path.name
        with open_read_only(db_path, lock_wait_s=lock_wait_s):  # checks the schema; no writer meanwhile
            try:
                for suffix in ("", ".wal"):
                    if db_path.with_name(db_path.name + suffix).exists():
                        shutil.copyfile(db_path.with_name(db_path.name + suffix), copy.with_name(copy.name + suffix))
            except OSError as error:
                print(f"fleetscope: cannot copy warehouse {db_path} to {folder} ({error.strerror}): reading it in "
                      "place, so an ingest waits until this command ends", file=sys.stderr, flush=True)
                copy = None
        with open_read_only(copy or db_path, lock_wait_s=lock_wait_s) as connection:
            yield connection


def insert_rows(connection: duckdb.DuckDBPyConnection, table: str, rows: Iterable[dict]) -> int:
    """Insert dicts keyed by column name into `table`; return how many.

    The rows travel as newline-delimited JSON in a temporary file, which DuckDB's read_json reads with the
    table's column types (a key the table lacks is left out, a column no row names is NULL). Binding Python
    lists or calling executemany costs ~0.5 ms per row in DuckDB; from_json over a JSON text bound as a
    parameter cost ~30 us per row of points, read_json ~5 us, and msgspec encodes a row ten times faster
    than the json module (docs/internals.md, "A warehouse of a thousand hosts"). Rows are encoded one by one
    into the file, so memory stays flat however many come, and the file lasts one statement.
    """
    inserted, longest, name = 0, _READ_JSON_OBJECT_BYTES, None
    try:
        with tempfile.NamedTemporaryFile(prefix="fleetscope-rows-", suffix=".ndjson") as file:
            name = file.name
            for row in rows:
                line = _ENCODER.encode(row)
                longest = max(longest, len(line))  # read_json refuses a row longer than its cap: the longest sets it
                file.write(line)
                file.write(b"\n")
                inserted += 1
            if inserted:
                file.flush()
                statement, columns = _insert_statement(connection, table)
                connection.execute(statement, [file.name, columns, longest + 1])
    except OSError as error:  # a full temporary folder: the message names the file it could not write
        if error.filename is not None or name is None:
            raise
        raise OSError(error.errno, error.strerror, name) from None
    return inserted


_ENCODER = msgspec.json.Encoder()
# read_json's default cap on one row's JSON (DuckDB's maximum_object_size); a longer row raises it for its file.
_READ_JSON_OBJECT_BYTES = 16 * 2**20

# Per writer connection, (database, table) -> its INSERT statement and column types: a writer's schema is this
# fleetscope's from the moment it opens (open_warehouse, attach_stage), and reading the catalog costs
# milliseconds, more than inserting a run's rows of most tables.
_INSERTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _insert_statement(connection: duckdb.DuckDBPyConnection, table: str) -> tuple[str, dict[str, str]]:
    database = connection.execute("SELECT current_database()").fetchone()[0]
    known = _INSERTS.setdefault(connection, {})
    if (database, table) not in known:
        columns = connection.execute(sql("warehouse/table_columns"), [table]).fetchall()
        column_list = ", ".join(quoted(name) for name, _unused in columns)
        known[database, table] = (f"INSERT INTO {quoted(table)} ({column_list}) SELECT {column_list} "
                                  "FROM read_json($1, format = 'newline_delimited', columns = $2, "
                                  "maximum_object_size = $3)", dict(columns))
    return known[database, table]
