"""The warehouse schema: migrations apply once and are recorded, views are one per file, and the
data dictionary documents every table, view and column."""

from __future__ import annotations

import re

import pytest

from fleetscope.store.warehouse import (MIGRATIONS_DIR, VIEWS_DIR, WAREHOUSE_DIR, apply_comments, apply_migrations,
                                  create_views, data_dictionary, open_warehouse)


def _schema_snapshot(connection) -> list[tuple]:
    return connection.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns ORDER BY ALL"
    ).fetchall()


def test_migrations_apply_once_and_are_recorded(tmp_path):
    db = tmp_path / "deep" / "folder" / "fleet.duckdb"
    with open_warehouse(db) as connection:
        recorded = connection.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        assert recorded == [(int(path.name[:3]), path.name) for path in sorted(MIGRATIONS_DIR.glob("*.sql"))]
        schema = _schema_snapshot(connection)
        assert apply_migrations(connection) == []
    with open_warehouse(db) as connection:
        assert connection.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(recorded)
        assert _schema_snapshot(connection) == schema


def test_each_view_file_defines_the_view_it_is_named_after(tmp_path):
    with open_warehouse(tmp_path / "fleet.duckdb") as connection:
        views = {row[0] for row in connection.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    for path in VIEWS_DIR.glob("*.sql"):
        text = path.read_text()
        assert len(re.findall(r"CREATE OR REPLACE VIEW", text)) == 1, path
        assert path.stem in views
    assert {"latency_curve", "runs_overview"} <= views


def test_the_data_dictionary_is_read_into_descriptions():
    text = """## Tables

### `t`
One row per `thing`.
Second line.

| column | type | unit | meaning |
|---|---|---|---|
| `a` | DOUBLE | ns | median latency, `p50` |
| `b` | VARCHAR | | name, or 'none' |

### `v`
| column | type | unit | meaning |
|---|---|---|---|
| `c` | INTEGER | the point's `unit` | a | b |
"""
    assert data_dictionary(text) == {
        "t": ("One row per thing. Second line.", {"a": "median latency, p50 [ns]", "b": "name, or 'none'"}),
        "v": ("", {"c": "a | b [the point's unit]"}),
    }


def test_the_descriptions_are_comments_on_every_table_view_and_column(tmp_path):
    db = tmp_path / "fleet.duckdb"
    with open_warehouse(db) as connection:
        missing = connection.execute(
            "SELECT table_name || '.' || column_name FROM duckdb_columns() "
            "WHERE NOT internal AND schema_name = 'main' AND comment IS NULL").fetchall()
        assert missing == []
        runs = connection.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'runs'").fetchone()[0]
        assert runs == "One row per loaded bundle."
        view = connection.execute("SELECT comment FROM duckdb_views() WHERE view_name = 'latency_curve'").fetchone()[0]
        assert view and view == data_dictionary()["latency_curve"][0]
        column = connection.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'runs' "
                                    "AND column_name = 'started_at'").fetchone()[0]
        assert column == "run start on the host [UTC]"
        assert apply_comments(connection) == 0  # nothing differs: an up-to-date warehouse is not written
        # A view re-created from its file loses its comments; the next writer puts them back.
        create_views(connection, every=True)
        assert connection.execute("SELECT comment FROM duckdb_views() WHERE view_name = 'latency_curve'").fetchone()[0] is None
        assert apply_comments(connection) > 0
        assert connection.execute("SELECT comment FROM duckdb_views() WHERE view_name = 'latency_curve'").fetchone()[0] == view


def test_the_data_dictionary_documents_every_table_view_and_column(tmp_path):
    readme = (WAREHOUSE_DIR / "README.md").read_text()
    sections = dict(re.findall(r"^### `(\w+)`\n(.*?)(?=^### |\Z)", readme, flags=re.MULTILINE | re.DOTALL))
    with open_warehouse(tmp_path / "fleet.duckdb") as connection:
        columns = connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
        ).fetchall()
    undocumented = [
        f"{table}.{column}" for table, column in columns
        if table not in sections or f"| `{column}` |" not in sections[table]
    ]
    assert undocumented == []


def test_migration_numbers_are_unique_and_leave_no_gap_but_the_known_one():
    numbers = sorted(int(path.name[:3]) for path in MIGRATIONS_DIR.glob("*.sql"))
    assert len(numbers) == len(set(numbers)), "two migrations share a number"
    gaps = set(range(1, numbers[-1] + 1)) - set(numbers)
    assert gaps == {7}, f"migration numbers missing: {sorted(gaps)} (only 007, explained in warehouse/README.md)"


def test_the_writer_caps_its_page_cache_so_ingest_memory_does_not_grow_with_the_warehouse(tmp_path):
    # DuckDB's default (80% of RAM) kept every block read or written: 1.3 GB at 1,000 hosts
    # (benchmarks/ingest_scale.py gives the figures); the cap bounds it whatever the warehouse holds
    with open_warehouse(tmp_path / "fleet.duckdb") as connection:
        limit = connection.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    number, unit = limit.split()
    assert float(number) * {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 1e3, "MB": 1e6, "GB": 1e9}[unit] == \
        pytest.approx(512e6, rel=1e-3), limit
