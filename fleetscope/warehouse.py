"""Open the DuckDB warehouse, bring its schema up to date and load rows into it.

The schema lives in warehouse/: numbered migrations (applied once each, recorded in
schema_migrations) and one view per file (re-created on every open). DuckDB lets one process write
a file at a time, so opening waits a while for another writer to finish instead of failing at once.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import duckdb

from fleetscope.errors import UserError
from fleetscope.resources import WAREHOUSE_DIR

MIGRATIONS_DIR = WAREHOUSE_DIR / "migrations"
VIEWS_DIR = WAREHOUSE_DIR / "views"
DEFAULT_DB = Path("warehouse/fleet.duckdb")
DEFAULT_LOCK_WAIT_S = 60.0

_MIGRATION_NAME = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


def migrations() -> list[tuple[int, Path]]:
    """The migration files in the order they apply, as (version, path)."""
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if match is None:
            raise RuntimeError(f"{path}: migration files are named NNN_description.sql")
        found.append((int(match.group(1)), path))
    versions = [version for version, _ in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"{MIGRATIONS_DIR}: two migrations share a number")
    return found


def schema_version() -> int:
    return max(version for version, _ in migrations())


def _connect(db_path: Path, read_only: bool, lock_wait_s: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + lock_wait_s
    while True:
        try:
            return duckdb.connect(str(db_path), read_only=read_only)
        except duckdb.IOException as error:
            if "lock" not in str(error).lower():
                raise UserError(f"cannot open warehouse {db_path}: {error}") from None
            if time.monotonic() >= deadline:
                holder = re.search(r"\(PID (\d+)\)", str(error))
                who = f"process {holder.group(1)}" if holder else "another process"
                raise UserError(
                    f"warehouse {db_path} is in use by {who} and stayed locked for {lock_wait_s:g} s: "
                    "wait for the other ingest/report/duckdb session to finish, or raise --lock-wait"
                ) from None
            time.sleep(0.25)


def apply_migrations(connection: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply the migrations not yet recorded; return the versions applied now."""
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    applied = {row[0] for row in connection.execute("SELECT version FROM schema_migrations").fetchall()}
    newly_applied = []
    for version, path in migrations():
        if version in applied:
            continue
        connection.execute("BEGIN TRANSACTION")
        try:
            connection.execute(path.read_text(encoding="utf-8"))
            connection.execute(
                "INSERT INTO schema_migrations VALUES (?, ?, current_timestamp::TIMESTAMP)", [version, path.name]
            )
            connection.execute("COMMIT")
        except duckdb.Error:
            connection.execute("ROLLBACK")
            raise
        newly_applied.append(version)
    return newly_applied


def create_views(connection: duckdb.DuckDBPyConnection) -> None:
    """(Re)create every view; a view that reads another is retried once the other exists."""
    pending = sorted(VIEWS_DIR.glob("*.sql"))
    while pending:
        failed: list[tuple[Path, duckdb.Error]] = []
        for path in pending:
            try:
                connection.execute(path.read_text(encoding="utf-8"))
            except duckdb.CatalogException as error:
                failed.append((path, error))
        if len(failed) == len(pending):
            path, error = failed[0]
            raise RuntimeError(f"{path}: {error}")
        pending = [path for path, _ in failed]


def open_warehouse(
    db_path: Path, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S, create: bool = True
) -> duckdb.DuckDBPyConnection:
    """Open (creating it and its parent folders if `create`) the warehouse with an up-to-date schema."""
    db_path = Path(db_path)
    if not db_path.exists():
        if not create:
            raise UserError(f"no warehouse at {db_path}: load bundles first with `fleetscope ingest`")
        db_path.parent.mkdir(parents=True, exist_ok=True)
    connection = _connect(db_path, read_only=False, lock_wait_s=lock_wait_s)
    try:
        apply_migrations(connection)
        create_views(connection)
    except BaseException:
        connection.close()
        raise
    return connection


def open_read_only(db_path: Path, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S) -> duckdb.DuckDBPyConnection:
    """Open an existing warehouse for reading only, after bringing its schema up to date."""
    open_warehouse(db_path, lock_wait_s=lock_wait_s, create=False).close()
    return _connect(Path(db_path), read_only=True, lock_wait_s=lock_wait_s)


_column_types: dict[str, list[tuple[str, str]]] = {}


def insert_rows(connection: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """Insert dicts keyed by column name into `table`.

    The rows travel as one JSON document unpacked by from_json: binding Python lists or calling
    executemany costs ~0.5 ms per row in DuckDB, this costs microseconds.
    """
    if not rows:
        return
    if table not in _column_types:
        _column_types[table] = connection.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = ? ORDER BY ordinal_position",
            [table],
        ).fetchall()
    columns = _column_types[table]
    structure = json.dumps([{name: data_type for name, data_type in columns}])
    column_list = ", ".join(f'"{name}"' for name, _ in columns)
    connection.execute(
        f'INSERT INTO "{table}" ({column_list}) '
        f"SELECT {column_list} FROM (SELECT unnest(from_json(?, ?), recursive := true))",
        [json.dumps(rows), structure],
    )
