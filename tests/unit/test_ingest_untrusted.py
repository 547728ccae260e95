"""`fleetscope ingest` facing what a fleet throws at it: a bundle from a newer fleetscope, two
ingests of one warehouse at the same moment (two runs finishing together), and a disk that fills."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

TABLES = ("hosts", "runs", "facts", "experiments", "points", "samples")


def row_counts(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return {table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}


def test_a_bundle_from_a_newer_fleetscope_is_refused_and_the_others_load(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    good = bundles.write()
    newer = bundles.write(bundles.manifest(host="node2", bundle_schema=2))
    result = cli("ingest", bundles.results_dir, "--db", db)
    assert result.returncode == 3
    assert f"loaded     {good}" in result.stdout
    assert f"REFUSED    {newer}" in result.stdout
    assert "bundle schema 2 is newer than this fleetscope supports (1): upgrade fleetscope" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT host FROM runs").fetchall() == [("node1",)]


def ingest_process(*arguments) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fleetscope", "ingest", *map(str, arguments)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_ingests_at_once_load_every_bundle_once(bundles, cli, tmp_path):
    """Two runs finish together: each ingests its own bundles and both also walk a shared one. The
    second to open the warehouse waits for the first (DuckDB allows one writer per file)."""
    db = tmp_path / "warehouse" / "fleet.duckdb"  # neither process finds it: both try to create it
    first = [bundles.write(bundles.manifest(host=f"a{i}")) for i in range(3)]
    second = [bundles.write(bundles.manifest(host=f"b{i}")) for i in range(3)]
    shared = bundles.write(bundles.manifest(host="shared"))
    processes = [ingest_process(*first, shared, "--db", db), ingest_process(*second, shared, "--db", db)]
    outputs = [process.communicate(timeout=180) for process in processes]

    for process, (stdout, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stdout + stderr
        assert "Traceback" not in stderr
    shared_lines = [line for stdout, _ in outputs for line in stdout.splitlines() if f" {shared}: " in line]
    assert sorted(line.split()[0] for line in shared_lines) == ["loaded", "unchanged"]

    points_per_bundle = len(bundles.latency_points())
    counts = row_counts(db)
    assert counts["runs"] == counts["hosts"] == counts["facts"] == counts["experiments"] == 7
    assert counts["points"] == 7 * points_per_bundle
    with duckdb.connect(str(db), read_only=True) as connection:
        hosts = [row[0] for row in connection.execute("SELECT host FROM runs ORDER BY host").fetchall()]
    assert hosts == ["a0", "a1", "a2", "b0", "b1", "b2", "shared"]
    # the file is whole: a third ingest finds everything already there
    again = cli("ingest", bundles.results_dir, "--db", db)
    assert again.returncode == 0, again.stderr
    assert [line.split()[0] for line in again.stdout.splitlines()[:-1]] == ["unchanged"] * 7
    assert row_counts(db) == counts


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="a small disk is a tmpfs mounted in a private mount namespace: root and unshare(1)")
def test_a_full_disk_stops_the_ingest_with_its_error_and_keeps_what_was_loaded(bundles, tmp_path):
    """A disk that fills during ingest: the bundle being loaded is rolled back, the ones before it stay,
    and the message is the operating system's, not DuckDB's "cannot rollback - no transaction is active"."""
    small = bundles.write(bundles.manifest(host="a-small"))
    many = [dict(point, samples=[round(100 + index % 977 / 7, 4) for index in range(200_000)])
            for point in bundles.latency_points()[:10]]
    bundles.write(bundles.manifest(host="b-large"), results={"results/latency_sweep.jsonl": many})
    disk = tmp_path / "disk"
    disk.mkdir()
    db = disk / "fleet.duckdb"
    script = (f"mount -t tmpfs -o size=6m tmpfs {disk} && "
              f"{sys.executable} -m fleetscope ingest {bundles.results_dir} --db {db}; echo \"ingest exit $?\"; "
              f"{sys.executable} -m fleetscope query 'SELECT host FROM runs' --format csv --db {db}; "
              f"{sys.executable} -m fleetscope query 'SELECT count(*) AS refused FROM refused_bundles' "
              f"--format csv --db {db}")
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                            capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert f"loaded     {small}" in result.stdout, output
    assert "ingest exit 1" in result.stdout, output
    assert "No space left on device" in result.stderr and "cannot rollback" not in output, output
    assert "Traceback" not in output
    assert "host\na-small\n" in result.stdout and "refused\n0\n" in result.stdout, output
