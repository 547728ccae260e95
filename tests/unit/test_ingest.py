"""`fleetscope ingest` as a user runs it: idempotent, all-or-nothing per bundle, replace on change."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import duckdb


TABLES = ("hosts", "runs", "facts", "cache_levels", "knob_values", "experiments", "points", "samples")
DUCKDB_CLI = Path(sys.executable).parent / "duckdb"


def row_counts(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}


def test_ingest_loads_a_bundle_and_a_second_ingest_changes_nothing(bundles, cli, tmp_path):
    db = tmp_path / "warehouse" / "fleet.duckdb"
    bundles.write()
    first = cli("ingest", bundles.results_dir, "--db", db)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("loaded ")
    counts = row_counts(db)
    points = bundles.latency_points()
    assert counts["points"] == len(points)
    assert counts["samples"] == sum(len(point["samples"]) for point in points)
    assert counts["runs"] == counts["hosts"] == 1

    second = cli("ingest", bundles.results_dir, "--db", db)
    assert second.returncode == 0, second.stderr
    assert "unchanged" in second.stdout and "already loaded, unchanged" in second.stdout
    assert row_counts(db) == counts


def test_a_corrupt_bundle_loads_nothing_while_a_good_one_beside_it_loads(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    before = cli("ingest", bundles.results_dir, "--db", db)
    assert before.returncode == 0, before.stderr
    counts_before = row_counts(db)

    good = bundles.write(bundles.manifest(host="node2"))
    corrupt = bundles.write(bundles.manifest(host="node3"))
    with (corrupt / "results" / "latency_sweep.jsonl").open("a") as results:
        results.write('{"schema_version": 1, "experiment": "latency_sw')
    result = cli("ingest", good, corrupt, "--db", db)

    assert result.returncode == 3
    assert f"loaded     {good}" in result.stdout
    assert f"REFUSED    {corrupt}" in result.stdout and "truncated" in result.stdout
    counts_after = row_counts(db)
    assert counts_after["hosts"] == counts_before["hosts"] + 1
    assert counts_after["points"] == 2 * counts_before["points"]
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM runs WHERE host = 'node3'").fetchone()[0] == 0


def test_a_bundle_that_fails_while_loading_is_rolled_back_whole(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    counts_before = row_counts(db)
    # Points stream into the bundle's transaction as they are validated: a bad last line is found
    # after hosts, runs, facts and every earlier point and sample were inserted.
    points = bundles.latency_points()
    points[-1]["samples"][-1] = 1e999
    bundle = bundles.write(bundles.manifest(host="node9"), results={"results/latency_sweep.jsonl": points})
    result = cli("ingest", bundle, "--db", db)
    assert result.returncode == 3
    assert f"REFUSED    {bundle}" in result.stdout
    assert f"line {len(points)}: at $.samples[4]: Infinity is not a finite number" in result.stdout
    assert row_counts(db) == counts_before


def test_a_re_collected_bundle_replaces_the_partial_one(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    partial = bundles.manifest(status="partial")
    partial["experiments"][0].update(status="failed", error="host unreachable")
    bundles.write(partial, results={"results/latency_sweep.jsonl": bundles.latency_points()[:5]})
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert row_counts(db)["points"] == 5

    bundles.write()  # the same run_id and host, now complete
    result = cli("ingest", bundles.results_dir, "--db", db)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("replaced ")
    counts = row_counts(db)
    assert counts["points"] == len(bundles.latency_points())
    assert counts["runs"] == counts["experiments"] == counts["facts"] == 1
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT status FROM runs").fetchall() == [("complete",)]
        assert connection.execute("SELECT status, error FROM experiments").fetchall() == [("ok", None)]


def test_the_warehouse_opens_in_the_stock_duckdb_cli(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    result = subprocess.run(
        [str(DUCKDB_CLI), "-readonly", str(db), "-csv", "-c", "select count(*) from samples"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["count_star()", str(sum(len(point["samples"]) for point in bundles.latency_points()))]


def test_a_locked_warehouse_fails_with_a_clear_message_after_waiting(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    hold = f"import duckdb, time; c = duckdb.connect({str(db)!r}); print('held', flush=True); time.sleep(30)"
    with subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout.readline().strip() == "held"
            started = time.monotonic()
            result = cli("ingest", bundles.results_dir, "--db", db, "--lock-wait", "1.5")
            assert time.monotonic() - started >= 1.5
        finally:
            holder.kill()
    assert result.returncode == 1
    assert "is in use by process" in result.stderr and "--lock-wait" in result.stderr
    assert "waiting up to 1.5 s for it" in result.stderr  # said at once, not only after the wait
    assert "Traceback" not in result.stderr
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0


def test_a_path_without_bundles_is_an_error(cli, tmp_path):
    result = cli("ingest", tmp_path, "--db", tmp_path / "fleet.duckdb")
    assert result.returncode == 1
    assert "no bundle at" in result.stderr and "Traceback" not in result.stderr


def test_a_run_folder_and_a_results_tree_are_both_walked(bundles, cli, tmp_path):
    bundles.write()
    bundles.write(bundles.manifest(host="node2"))
    result = cli("ingest", bundles.results_dir / bundles.run_id, "--db", tmp_path / "fleet.duckdb")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("loaded ") == 2
