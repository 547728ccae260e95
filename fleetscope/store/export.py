"""`fleetscope export --parquet DIR`: the warehouse as Parquet, for engines that outgrow one DuckDB file.

Every table and view with `run_id` and `host` columns is written hive-partitioned,
DIR/<tables|views>/<name>/host=<host>/run_id=<run_id>/*.parquet, so Trino, Spark, BigQuery or DuckDB
itself can read one host or run without touching the rest; the few without those columns (hosts,
schema_migrations, fleet_overview) are one file each. A partitioned relation with no rows is one
file, <name>/empty.parquet, with its columns and no rows: an engine still finds the relation and its
schema (Spark refuses a path that does not exist). DIR/export.json lists what was written.

DuckDB writes its 128-bit integers (a HUGEINT sum of counts) to Parquet as DOUBLE and its unsigned
64-bit ones as UINT64, which Spark reads as DECIMAL(20,0); the export casts both to BIGINT, so counts
stay integers everywhere (a value that does not fit stops the export rather than being changed).
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
from fleetscope.resources import sql
from fleetscope.store.warehouse import schema_version

WRITTEN = ("tables", "views", "export.json")
WRITTEN_AS_BIGINT = {"HUGEINT", "UHUGEINT", "UBIGINT"}
EMPTY_PARTITIONED = "empty.parquet"


@dataclass(frozen=True)
class Exported:
    name: str
    kind: str           # table | view
    rows: int
    path: str           # relative to DIR: a folder (partitioned) or a file
    partitioned: bool
    columns: dict[str, str]  # name: DuckDB type as written, in order (an engine can declare the table from it)


def _select_list(columns: dict[str, str], written: dict[str, str]) -> str:
    """Every column in order under its own name, cast where the type written differs from the warehouse's."""
    quoted = {name: '"' + name.replace('"', '""') + '"' for name in columns}
    return ", ".join(quoted[name] if written[name] == data_type
                     else f"CAST({quoted[name]} AS {written[name]}) AS {quoted[name]}"
                     for name, data_type in columns.items())


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
    for name, kind, column_list in connection.execute(sql("export/relations")).fetchall():
        columns = dict(column_list)
        written = {column: "BIGINT" if data_type in WRITTEN_AS_BIGINT else data_type
                   for column, data_type in columns.items()}
        rows = connection.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        select = f'SELECT {_select_list(columns, written)} FROM "{name}"'
        folder = out_dir / f"{kind}s"
        partitioned = {"run_id", "host"} <= columns.keys()
        if partitioned:
            target = folder / name
            if rows:
                target.parent.mkdir(parents=True, exist_ok=True)
                connection.execute(f"COPY ({select}) TO {_quote(target)} "
                                   "(FORMAT parquet, PARTITION_BY (host, run_id))")
            else:
                target.mkdir(parents=True, exist_ok=True)
                connection.execute(f"COPY ({select}) TO {_quote(target / EMPTY_PARTITIONED)} (FORMAT parquet)")
        else:
            target = folder / f"{name}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            connection.execute(f"COPY ({select}) TO {_quote(target)} (FORMAT parquet)")
        exported.append(Exported(name, kind, rows, str(target.relative_to(out_dir)), partitioned, written))
    manifest = {"fleetscope_version": __version__, "warehouse_schema": schema_version(),
                "exported_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "partitioning": "hive: host=<host>/run_id=<run_id>; a partitioned relation with no rows is one file, "
                                f"{EMPTY_PARTITIONED}, with its columns",
                "relations": [asdict(item) for item in exported]}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "export.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return exported
