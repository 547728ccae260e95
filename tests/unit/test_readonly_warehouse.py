"""Readers only read (issue 14): `query`, `report`, `export` and the notebooks open the warehouse
read-only and leave its bytes unchanged, `query` cannot reach other files, databases or extensions,
migrations and views come only from writers (`ingest`, `import`, `migrate`), and every verb refuses a
warehouse from a newer fleetscope, naming both schema versions."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from fleetscope.store.warehouse import MIGRATIONS_DIR, open_read_only, schema_version


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def loaded_db(bundles, cli, tmp_path) -> Path:
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    bundles.write(bundles.manifest(host="node2"))
    result = cli("ingest", bundles.results_dir, "--db", db)
    assert result.returncode == 0, result.stdout + result.stderr
    return db


def test_readers_leave_the_files_bytes_unchanged(cli, loaded_db, tmp_path):
    before = digest(loaded_db), loaded_db.stat().st_mtime_ns
    assert cli("query", "SELECT count(*) FROM samples", "--db", loaded_db).returncode == 0
    report = cli("report", "--db", loaded_db, "--out", tmp_path / "reports")
    assert report.returncode == 0, report.stderr
    export = cli("export", "--parquet", tmp_path / "lake", "--db", loaded_db)
    assert export.returncode == 0, export.stderr
    assert (digest(loaded_db), loaded_db.stat().st_mtime_ns) == before
    assert not Path(f"{loaded_db}.wal").exists()


REFUSED_SQL = {
    "read a file": "SELECT * FROM read_text('/etc/hostname')",
    "read a CSV": "SELECT * FROM read_csv('/etc/passwd', sep = ':')",
    "list files": "SELECT * FROM glob('/etc/*')",
    "write a file": "COPY (SELECT * FROM runs) TO '{out}/copied.csv'",
    "export the database": "EXPORT DATABASE '{out}/exported'",
    "attach a database": "ATTACH '{out}/other.duckdb' AS other",
    "install an extension": "INSTALL httpfs",
    "load an extension": "LOAD httpfs",
    "turn external access back on": "SET enable_external_access = true",
    "unlock the configuration": "SET lock_configuration = false",
    "change the file": "DELETE FROM runs",
    # issue 27: a database may reach its own files with external access off
    "read the warehouse's own file": "SELECT count(*) FROM read_blob('{db}')",
    "read its WAL as text": "SELECT * FROM read_text('{db}.wal')",
    "a file function inside a SELECT": "SELECT * FROM (SELECT 1) JOIN read_csv('/etc/passwd') ON true",
    "COPY hidden in query()": "SELECT * FROM query('COPY (SELECT 1) TO ''{out}/copied.csv''')",
    "a second statement": "SELECT 1; COPY (SELECT 1) TO '{out}/copied.csv'",
    "a checkpoint": "CHECKPOINT",
    "a pragma that writes": "PRAGMA enable_checkpoint_on_shutdown",
}
# What either layer says: the statement check (one SELECT or EXPLAIN) or DuckDB's sandbox.
REFUSALS = ("query only reads", "one statement at a time", "disabled by configuration",
            "disabled through configuration", "configuration has been locked", "read-only mode",
            "Expected a single SELECT statement")


@pytest.mark.parametrize("what", REFUSED_SQL)
def test_query_cannot_reach_outside_the_warehouse(cli, loaded_db, tmp_path, what):
    out = tmp_path / "out"
    out.mkdir()
    before = digest(loaded_db)
    result = cli("query", REFUSED_SQL[what].format(out=out, db=loaded_db), "--db", loaded_db)
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith("fleetscope query: error: ") and "Traceback" not in result.stderr
    assert any(word in result.stderr for word in REFUSALS), result.stderr
    assert list(out.iterdir()) == []
    assert digest(loaded_db) == before


def _warehouse_with_a_wal(bundles, cli, tmp_path) -> Path:
    """A warehouse whose last commits are still in its WAL (as an ingest killed after them leaves it)."""
    db = tmp_path / "wal" / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db)) as connection:
        connection.execute("PRAGMA disable_checkpoint_on_shutdown")
        connection.execute("SET checkpoint_threshold = '1TB'")
        connection.execute("INSERT INTO hosts SELECT 'wal-' || i, now()::TIMESTAMP FROM range(20000) t(i)")
    assert Path(f"{db}.wal").stat().st_size > 100_000
    return db


def _folder_state(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under `folder`: size, modification time and sha256."""
    return {str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns, digest(path))
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _hostile_sql(db: Path) -> list[str]:
    folder = db.parent
    return [f"COPY (SELECT 1) TO '{db}.wal' (USE_TMP_FILE false)", f"COPY (SELECT 1) TO '{db}' (USE_TMP_FILE false)",
            f"COPY (SELECT 1) TO '{db}.wal'", f"COPY (SELECT * FROM runs) TO '{db}.tmp/spill.csv'",
            f"SELECT count(*) FROM read_blob('{db}')", f"SELECT count(*) FROM read_blob('{db}.wal')",
            f"SELECT * FROM read_text('{db}.wal')", f"SELECT * FROM glob('{folder}/*')",
            f"SELECT * FROM query('COPY (SELECT 1) TO ''{db}.wal'' (USE_TMP_FILE false)')",
            f"EXPORT DATABASE '{folder}/exported'", f"ATTACH '{db}.wal' AS wal", "CHECKPOINT", "FORCE CHECKPOINT",
            "SET disabled_filesystems = ''", "SET enable_external_access = true",
            "SET temp_directory = '/tmp/fleetscope-spill'", "INSERT INTO hosts VALUES ('x', now()::TIMESTAMP)"]


def test_query_writes_no_file_its_own_wal_included(bundles, cli, tmp_path):
    """Issue 27 item 4: `COPY (SELECT 1) TO '<db>.wal' (USE_TMP_FILE false)` cut a 3.1 MB WAL to 4 bytes
    and the warehouse came back empty at schema version 0; read_blob('<db>') read the file. Every hostile
    statement is refused, and the warehouse's folder holds the same files with the same bytes and times."""
    db = _warehouse_with_a_wal(bundles, cli, tmp_path)
    before = _folder_state(db.parent)
    for statement in _hostile_sql(db):
        result = cli("query", statement, "--db", db)
        assert result.returncode == 1 and "Traceback" not in result.stderr, (statement, result.stdout)
        assert any(word in result.stderr for word in REFUSALS), (statement, result.stderr)
    assert _folder_state(db.parent) == before
    assert not Path("/tmp/fleetscope-spill").exists()
    counted = cli("query", "SELECT count(*) AS hosts FROM hosts", "--format", "csv", "--db", db)
    assert counted.stdout.split() == ["hosts", "20001"], counted.stderr
    assert _folder_state(db.parent) == before


def test_a_reader_s_connection_reaches_no_file_even_without_the_statement_check(bundles, cli, tmp_path):
    """The second layer alone: the statements run straight on open_read_only's connection (as a notebook
    would run them) fail in DuckDB, and the folder is unchanged."""
    db = _warehouse_with_a_wal(bundles, cli, tmp_path)
    before = _folder_state(db.parent)
    with open_read_only(db) as connection:
        for statement in _hostile_sql(db):
            try:
                connection.execute(statement).fetchall()
            except duckdb.Error:
                continue
            # what DuckDB lets run on a read-only file must be a no-op (CHECKPOINT is)
            assert statement.endswith("CHECKPOINT"), f"{statement} ran"
        assert connection.execute("SELECT count(*) FROM hosts").fetchone() == (20001,)
    assert _folder_state(db.parent) == before


@pytest.mark.parametrize("statement, said", [
    (";;;", "no SQL statement given"), ("-- x", "no SQL statement given"), ("  ;\n-- only a comment\n;", "no SQL"),
    ("SELEC 1", "query failed: Parser Error"),
    ("SELECT CAST(host || 'x' AS INTEGER) FROM runs", "query failed: Conversion Error"),
    ("SELECT error('raised while the rows are fetched') FROM range(3000)", "raised while the rows"),
])
def test_a_query_that_is_no_statement_or_fails_says_so_without_a_traceback(cli, loaded_db, statement, said):
    result = cli("query", statement, "--db", loaded_db)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("fleetscope query: error: ") and said in result.stderr, result.stderr


def test_query_json_is_json_and_csv_cells_are_text(cli, loaded_db):
    """--format json printed NaN and Infinity, which no strict JSON reader takes; --format csv passed ESC
    and a formula a spreadsheet runs (=HYPERLINK(...)) as they were."""
    statement = ("SELECT 'nan'::DOUBLE AS not_a_number, 'inf'::DOUBLE AS infinite, ['-inf'::DOUBLE, 1.5] AS listed, "
                 "{'inner': 'nan'::DOUBLE} AS nested, 2.5 AS finite")
    result = cli("query", statement, "--format", "json", "--db", loaded_db)
    assert result.returncode == 0, result.stderr

    def refuse(constant):
        raise ValueError(constant)

    assert json.loads(result.stdout, parse_constant=refuse) == [
        {"not_a_number": None, "infinite": None, "listed": [None, 1.5], "nested": {"inner": None}, "finite": 2.5}]
    statement = ("SELECT '=HYPERLINK(\"http://evil.example\",\"click\")' AS formula, '+1+cmd|x' AS plus, "
                 "'@SUM(1)' AS at, '-2+3' AS minus, chr(27) || '[2Jcleared' AS escape, 'a' || chr(8238) || 'b' AS bidi, "
                 "-185 AS negative_number, 'plain' AS plain")
    result = cli("query", statement, "--format", "csv", "--db", loaded_db)
    assert result.returncode == 0, result.stderr
    header, row = list(csv.reader(io.StringIO(result.stdout)))
    assert dict(zip(header, row)) == {
        "formula": "'=HYPERLINK(\"http://evil.example\",\"click\")", "plus": "'+1+cmd|x", "at": "'@SUM(1)",
        "minus": "'-2+3", "escape": "\\x1b[2Jcleared", "bidi": "a\\u202eb", "negative_number": "-185",
        "plain": "plain"}
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout


def test_export_writes_only_under_its_folder(loaded_db, tmp_path):
    lake = tmp_path / "lake"
    with open_read_only(loaded_db, writable_directory=lake) as connection:
        lake.mkdir()
        connection.execute(f"COPY (SELECT 1) TO '{lake}/inside.csv'")
        with pytest.raises(duckdb.PermissionException):
            connection.execute(f"COPY (SELECT 1) TO '{tmp_path}/outside.csv'")
    assert (lake / "inside.csv").exists() and not (tmp_path / "outside.csv").exists()


def test_a_report_holds_the_warehouse_only_while_it_copies_it(bundles, cli, loaded_db, tmp_path):
    """`report` reads a snapshot (open_snapshot): an ingest started while it runs opens the warehouse at
    once, and the copy is gone when the report ends."""
    spare = tmp_path / "tmp"
    spare.mkdir()
    hold = ("import sys\nfrom fleetscope.store.warehouse import open_snapshot\n"
            "with open_snapshot(sys.argv[1]) as c:\n"
            "    print(c.execute('SELECT count(*) FROM runs').fetchone()[0], flush=True)\n    sys.stdin.read()\n")
    with subprocess.Popen([sys.executable, "-c", hold, str(loaded_db)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(spare)}) as holder:
        try:
            assert holder.stdout.readline().strip() == "2"
            assert list(spare.glob("fleetscope-snapshot-*/fleet.duckdb")), "the reader is not on a copy"
            bundles.write(bundles.manifest(host="node3"))
            result = cli("ingest", bundles.results_dir, "--db", loaded_db, "--lock-wait", "0")
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)
    assert result.returncode == 0, result.stderr
    assert "loaded" in result.stdout and "waiting" not in result.stderr
    assert holder.returncode == 0 and not list(spare.iterdir())


def test_readers_do_not_block_each_other(cli, loaded_db):
    hold = ("import sys; from fleetscope.store.warehouse import open_read_only; c = open_read_only(sys.argv[1]); "
            "print('held', flush=True); sys.stdin.read()")
    with subprocess.Popen([sys.executable, "-c", hold, str(loaded_db)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline().strip() == "held"
            result = cli("query", "SELECT count(*) AS runs FROM runs", "--format", "csv", "--db", loaded_db,
                         "--lock-wait", "0")
        finally:
            holder.stdin.close()
            holder.wait(timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["runs", "2"]
    # two readers in one process (two marimo sessions) share the file
    with open_read_only(loaded_db) as first, open_read_only(loaded_db) as second:
        assert first.execute("SELECT count(*) FROM runs").fetchone() == second.execute(
            "SELECT count(*) FROM runs").fetchone() == (2,)


def _old_warehouse(path: Path) -> None:
    """A warehouse as fleetscope wrote it before migration 006: samples repeat their point's params."""
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                           "applied_at TIMESTAMP NOT NULL)")
        for migration in sorted(MIGRATIONS_DIR.glob("00[1-5]_*.sql")):
            connection.execute(migration.read_text())
            connection.execute("INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)",
                               [int(migration.name[:3]), migration.name])
        connection.execute("INSERT INTO points VALUES ('r', 'h', 'latency_sweep', 0, 'chase', 'latency', 'ns', "
                           "'{\"working_set_bytes\": 4096}', 1, 1.5, 1.5, 1, 2, 3, NULL)")
        connection.execute("INSERT INTO samples SELECT 'r', 'h', 'latency_sweep', 0, 'chase', 'latency', 'ns', "
                           "'{\"working_set_bytes\": 4096}', i, 1 + i / 2 FROM range(3) t(i)")


def test_an_older_warehouse_is_read_only_after_migrate_and_keeps_its_samples(cli, tmp_path):
    db = tmp_path / "old.duckdb"
    _old_warehouse(db)
    before = digest(db)
    for verb in (["query", "SELECT 1"], ["report", "--out", tmp_path / "reports"],
                 ["export", "--parquet", tmp_path / "lake"]):
        result = cli(*verb, "--db", db)
        assert result.returncode == 1, verb
        assert f"has schema version 5 and this fleetscope reads {schema_version()}" in result.stderr
        assert f"run `fleetscope migrate --db {db}`" in result.stderr
    assert digest(db) == before

    migrated = cli("migrate", "--db", db)
    assert migrated.returncode == 0, migrated.stderr
    assert f"schema version {schema_version()}" in migrated.stdout
    samples = cli("query", "SELECT point_index, sample_index, value FROM samples ORDER BY sample_index",
                  "--format", "csv", "--db", db)
    assert samples.returncode == 0, samples.stderr
    assert samples.stdout.split() == ["point_index,sample_index,value", "0,0,1.0", "0,1,1.5", "0,2,2.0"]


def test_a_reader_asks_for_migrate_when_the_views_are_another_versions(cli, loaded_db):
    with duckdb.connect(str(loaded_db)) as connection:
        connection.execute("UPDATE schema_views SET sha256 = 'older' WHERE view_name = 'latency_curve'")
    result = cli("query", "SELECT 1", "--db", loaded_db)
    assert result.returncode == 1
    assert "views written by another fleetscope version (latency_curve)" in result.stderr
    assert cli("migrate", "--db", loaded_db).returncode == 0
    assert cli("query", "SELECT 1", "--db", loaded_db).returncode == 0


def test_every_verb_refuses_a_newer_warehouse_naming_both_versions(bundles, cli, loaded_db, tmp_path):
    newer = schema_version() + 1
    with duckdb.connect(str(loaded_db)) as connection:
        connection.execute("INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)",
                           [newer, f"{newer:03d}_from_the_future.sql"])
    before = digest(loaded_db)
    raw = tmp_path / "mlc.txt"
    raw.write_text((Path(__file__).resolve().parents[1] / "fixtures" / "mlc_samples" /
                    "csit_skx_loaded_latency.txt").read_text())
    verbs = (["ingest", bundles.results_dir], ["query", "SELECT 1"], ["report", "--out", tmp_path / "reports"],
             ["export", "--parquet", tmp_path / "lake"], ["migrate"],
             ["import", "--host", "lab7", "--results", tmp_path / "imported", "mlc", raw])
    for verb in verbs:
        result = cli(*verb, "--db", loaded_db)
        assert result.returncode == 1, (verb, result.stdout)
        assert (f"has schema version {newer} (it holds migration {newer:03d}_from_the_future.sql" in result.stderr
                and f"this fleetscope reads schema version {schema_version()}" in result.stderr), (verb, result.stderr)
        assert "Traceback" not in result.stderr
    assert digest(loaded_db) == before


def test_a_writer_recreates_the_views_whose_file_changed_or_that_are_missing(bundles, cli, loaded_db):
    with duckdb.connect(str(loaded_db)) as connection:
        connection.execute("UPDATE schema_views SET sha256 = 'older' WHERE view_name = 'latency_curve'")
        connection.execute("DROP VIEW tlb_reach")
        untouched = connection.execute("SELECT created_at FROM schema_views WHERE view_name = 'mlp_curve'").fetchone()
    assert cli("ingest", bundles.results_dir, "--db", loaded_db).returncode == 0
    with duckdb.connect(str(loaded_db), read_only=True) as connection:
        hashes = dict(connection.execute("SELECT view_name, sha256 FROM schema_views").fetchall())
        assert hashes["latency_curve"] == hashlib.sha256((MIGRATIONS_DIR.parent / "views" / "latency_curve.sql")
                                                         .read_bytes()).hexdigest()
        assert connection.execute("SELECT count(*) FROM tlb_reach").fetchone() == (0,)
        mlp_curve = connection.execute("SELECT created_at FROM schema_views WHERE view_name = 'mlp_curve'").fetchone()
        assert mlp_curve == untouched


def test_a_changed_view_that_reads_a_column_another_changed_view_adds_waits_for_it(bundles, cli, loaded_db):
    """fleet_overview reads runs_overview's new columns (through latest_runs) and comes first alphabetically: created
    while runs_overview is still an older fleetscope's, it fails to bind, and is created again after it."""
    views = MIGRATIONS_DIR.parent / "views"
    with duckdb.connect(str(loaded_db)) as connection:
        body = views.joinpath("runs_overview.sql").read_text().split(" AS\n", 1)[1].rstrip().rstrip(";")
        connection.execute(f"CREATE OR REPLACE VIEW runs_overview AS SELECT * EXCLUDE (reference_tool) FROM ({body})")
        connection.execute("UPDATE schema_views SET sha256 = 'older' WHERE view_name IN ('runs_overview', 'fleet_overview')")
    proc = cli("ingest", bundles.results_dir, "--db", loaded_db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with duckdb.connect(str(loaded_db), read_only=True) as connection:
        assert "reference_tool" in [row[0] for row in connection.execute("DESCRIBE fleet_overview").fetchall()]