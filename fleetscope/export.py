"""`fleetscope export --parquet DIR`: the warehouse as Parquet, for engines that outgrow one DuckDB file.

Every table and view with `run_id` and `host` columns is written hive-partitioned,
DIR/<tables|views>/<name>/host=<host>/run_id=<run_id>/*.parquet, so Trino, Spark, BigQuery or DuckDB
itself can read one host or run without touching the rest; the few without those columns (hosts,
schema_migrations, fleet_overview) are one file each. DIR/export.json lists what was written.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from fleetscope import __version__
from fleetscope.errors import UserError
from fleetscope.warehouse import schema_version

WRITTEN = ("tables", "views", "export.json")


@dataclass(frozen=True)
class Exported:
    name: str
    kind: str           # table | view
    rows: int
    path: str           # relative to DIR: a folder (partitioned) or a file
    partitioned: bool


def _relations(connection: duckdb.DuckDBPyConnection) -> list[tuple[str, str, set[str]]]:
    relations = connection.execute(
        "SELECT table_name, table_type, list(column_name) FROM information_schema.columns "
        "JOIN information_schema.tables USING (table_catalog, table_schema, table_name) "
        "WHERE table_schema = 'main' GROUP BY ALL ORDER BY table_name").fetchall()
    return [(name, "view" if kind == "VIEW" else "table", set(columns)) for name, kind, columns in relations]


def _quote(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def export_parquet(connection: duckdb.DuckDBPyConnection, out_dir: Path, *, overwrite: bool = False) -> list[Exported]:
    """Write every table and view under `out_dir`; refuse a folder holding an earlier export unless `overwrite`."""
    out_dir = Path(out_dir)
    earlier = [name for name in WRITTEN if (out_dir / name).exists()]
    if earlier and not overwrite:
        raise UserError(f"{out_dir} already holds an export ({', '.join(earlier)}): choose a new folder or pass "
                        "--overwrite to replace it")
    for name in earlier:
        target = out_dir / name
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    exported = []
    for name, kind, columns in _relations(connection):
        rows = connection.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        folder = out_dir / f"{kind}s"
        partitioned = {"run_id", "host"} <= columns
        if partitioned:
            target = folder / name
            if rows:
                target.parent.mkdir(parents=True, exist_ok=True)
                connection.execute(f'COPY (SELECT * FROM "{name}") TO {_quote(target)} '
                                   "(FORMAT parquet, PARTITION_BY (host, run_id))")
        else:
            target = folder / f"{name}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            connection.execute(f'COPY (SELECT * FROM "{name}") TO {_quote(target)} (FORMAT parquet)')
        exported.append(Exported(name, kind, rows, str(target.relative_to(out_dir)), partitioned))
    manifest = {"fleetscope_version": __version__, "warehouse_schema": schema_version(),
                "exported_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "partitioning": "hive: host=<host>/run_id=<run_id>; a partitioned relation with no rows has no folder",
                "relations": [asdict(item) for item in exported]}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "export.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return exported
