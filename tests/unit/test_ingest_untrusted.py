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

DEFAULT_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "default_run" / "results"

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


needs_mounts = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                  reason="small and read-only disks are tmpfs in a private mount namespace")


@needs_mounts
def test_a_full_or_read_only_disk_under_any_verb_is_a_message_not_a_traceback(bundles, cli, tmp_path):
    """Issue 27 item 8: the first ingest onto a full disk, `report --out` and `export` onto a full disk,
    `import curve` and `reference load` onto a read-only results folder each ended in a traceback; an ingest
    whose temporary folder is full says which file it could not write."""
    bundles.write()
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    curve = Path(__file__).resolve().parents[2] / "fleetscope" / "references" / "rpi4b_cortex-a72_ramlat.csv"
    full, read_only, scratch = tmp_path / "full", tmp_path / "read-only", tmp_path / "scratch"
    for folder in (full, read_only, scratch):
        folder.mkdir()
    fleetscope = f"{sys.executable} -m fleetscope"
    cases = {
        "first ingest": f"{fleetscope} ingest {bundles.results_dir} --db {full}/new.duckdb",
        # the rows go to DuckDB through a temporary file (fleetscope.store.warehouse.insert_rows); the default
        # run's points take more than the page the folder has left (Python's check that it is writable fits)
        "ingest, temporary folder full": f"TMPDIR={scratch} {fleetscope} ingest {DEFAULT_RUN} "
                                         f"--db {tmp_path}/elsewhere.duckdb",
        "report": f"{fleetscope} report --db {db} --out {full}/reports",
        "export": f"{fleetscope} export --db {db} --parquet {full}/lake",
        "import curve": f"{fleetscope} import curve --host ref-a72 --cpu-model Cortex-A72 --db {db} "
                        f"--results {read_only}/results {curve}",
        "reference load": f"{fleetscope} reference load --db {db} --results {read_only}/results",
    }
    script = "\n".join([f"mount -t tmpfs -o size=64k tmpfs {full}",
                        f"head -c 60000 /dev/zero > {full}/filler || true",
                        f"mount -t tmpfs -o size=64k tmpfs {scratch}",
                        f"head -c 60000 /dev/zero > {scratch}/filler || true",
                        f"mount -t tmpfs -o ro tmpfs {read_only}"]
                       + [f"echo '### {name}'; {command}; echo \"### exit $?\"" for name, command in cases.items()])
    result = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                            capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    sections = result.stdout.split("### ")[1:]
    exits = {section.split("\n", 1)[0]: section for section in sections if not section.startswith("exit")}
    assert output.count("### exit 1") == len(cases), output
    for name, verb in (("first ingest", "ingest"), ("report", "report"), ("export", "export")):
        assert name in exits and f"fleetscope {verb}: error: " in result.stderr
    assert "No space left on device" in result.stderr and "Read-only file system" in result.stderr, result.stderr
    assert f"fleetscope ingest: error: {scratch}/fleetscope-rows-" in result.stderr, output
    for verb in ("ingest", "report", "export", "import", "reference"):
        assert f"fleetscope {verb}: error: " in result.stderr, (verb, result.stderr)


def _damage(db: Path) -> None:
    """Overwrite a stretch of every block after the file's headers, as a failing disk would."""
    size = db.stat().st_size
    with db.open("r+b") as file:
        for offset in range(3 * 4096 + 100, size, 64 * 1024):
            file.seek(offset)
            file.write(b"\xa5" * 64)


def test_a_corrupt_warehouse_is_named_corrupt_at_once_with_the_recovery(bundles, cli, tmp_path):
    """Issue 27 item 7: DuckDB's checksum error ("... in block at location ...") contains "lock", so every
    verb waited --lock-wait seconds and said the warehouse was in use by another process."""
    bundles.write()
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    _damage(db)
    for verb in (["query", "SELECT count(*) FROM samples"], ["report", "--out", tmp_path / "reports"],
                 ["ingest", bundles.results_dir], ["export", "--parquet", tmp_path / "lake"], ["migrate"]):
        result = cli(*verb, "--db", db, "--lock-wait", "20")
        assert result.returncode == 1 and "Traceback" not in result.stderr, (verb, result.stderr)
        assert "is corrupt" in result.stderr and "in use" not in result.stderr, (verb, result.stderr)
        assert f"mv {db} {db}.corrupt" in result.stderr and "fleetscope ingest results/" in result.stderr
        assert "waiting" not in result.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_nul_in_a_path_refuses_that_bundle_on_every_ingest_and_the_others_load(bundles, cli, tmp_path, jobs):
    """Issue 27 item 1: a NUL in experiments[].file reached Path.resolve(); its ValueError stopped the ingest
    with a traceback and exit 1, before any later bundle, and again on every later ingest."""
    nul = bundles.manifest(host="a-nul")
    nul["experiments"][0]["file"] = "results/latency_sweep.jsonl\u0000"
    bundles.write(nul)
    bundles.write(bundles.manifest(host="b-good"))
    db = tmp_path / "fleet.duckdb"
    for _ in range(2):
        result = cli("ingest", bundles.results_dir, "--db", db, "--jobs", jobs)
        assert result.returncode == 3 and "Traceback" not in result.stderr, result.stdout + result.stderr
        assert "REFUSED" in result.stdout and "at $.experiments[0].file" in result.stdout
        assert "1 of 2 bundles accepted" in result.stdout
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT host FROM runs").fetchall() == [("b-good",)]
        assert connection.execute("SELECT host FROM refused_bundles").fetchall() == [("a-nul",)]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_one_run_of_a_host_in_two_folders_is_a_conflict_not_two_replacements(bundles, cli, tmp_path, jobs):
    """Issue 27 item 14: the same (run, host) in two folders given to one ingest was "replaced" twice per
    ingest, the last folder winning. The first folder loads; the other is refused as a conflict naming
    both, on this ingest and on the next one given that folder alone, until one of them is gone."""
    first = bundles.write()
    other_results = tmp_path / "old-results"
    second = type(bundles)(other_results).write(results={"results/latency_sweep.jsonl": bundles.latency_points(seed=9)})
    db = tmp_path / "fleet.duckdb"
    for _ in range(2):
        result = cli("ingest", bundles.results_dir, other_results, "--db", db, "--jobs", jobs)
        assert result.returncode == 3, result.stdout + result.stderr
        lines = result.stdout.splitlines()
        assert lines[0].split()[0] in ("loaded", "unchanged") and str(first) in lines[0]
        assert lines[1].startswith(f"REFUSED    {second}: {second}: conflict: run {bundles.run_id}, host node1 "
                                   f"is also in {first}"), lines[1]
        assert "replaced" not in result.stdout
    alone = cli("ingest", other_results, "--db", db, "--jobs", jobs)
    assert alone.returncode == 3 and "conflict" in alone.stdout and "the warehouse holds the run from" in alone.stdout
    shutil.rmtree(first)
    moved = cli("ingest", other_results, "--db", db, "--jobs", jobs)
    assert moved.returncode == 0 and moved.stdout.startswith(f"replaced   {second}"), moved.stdout
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT bundle_path FROM runs").fetchall() == [(str(second),)]
        assert connection.execute("SELECT count(*) FROM refused_bundles").fetchone() == (0,)


def _peak_rss_mb(*arguments) -> tuple[float, str]:
    """Peak resident memory of `fleetscope ARGUMENTS` (MB) and its output: measured by a small parent whose
    only child it is (RUSAGE_CHILDREN)."""
    measure = ("import resource, subprocess, sys\n"
               "result = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\nprint(result.stdout)")
    proc = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "fleetscope", *map(str, arguments)],
                          capture_output=True, text=True, timeout=600, check=True)
    peak, _, output = proc.stdout.partition("\n")
    return float(peak), output


def test_a_line_of_a_million_keys_and_a_20_mb_text_cost_memory_in_proportion(bundles, tmp_path):
    """Issue 27 item 13: an 18.8 MB line of 1M keys peaked at 674 MB, a 20 MB `error` string at 480 MB (and
    made a 21 MB page); a manifest of 1M keys was parsed whole even before it was validated. All three are
    refused at their caps now, and the ingest's peak grows over a minimal bundle's by at most 6 times the
    largest of them."""
    import json as json_module

    minimal_results = tmp_path / "minimal"
    type(bundles)(minimal_results).write()
    floor, _ = _peak_rss_mb("ingest", minimal_results, "--db", tmp_path / "minimal.duckdb")
    points = bundles.latency_points()
    keyed = dict(points[1], params=dict(points[1]["params"], note="@"))
    line = json_module.dumps(keyed).replace('"@"', "{" + ",".join(f'"k{index:07d}": 0' for index in range(1_000_000))
                                            + "}")
    bundles.write(results={"results/latency_sweep.jsonl": json_module.dumps(points[0]) + "\n" + line + "\n"})
    error = bundles.manifest(host="node2")
    error["experiments"][0]["error"] = "x" * 20_000_000
    bundles.write(error)
    keyed_manifest = bundles.manifest(host="node3")  # read before validation too (is it unchanged?)
    keyed_manifest["facts"]["padding"] = {f"k{index:07d}": 0 for index in range(1_000_000)}
    bundles.write(keyed_manifest)
    peak, output = _peak_rss_mb("ingest", bundles.results_dir, "--db", tmp_path / "fleet.duckdb")
    assert "MAX_JSON_KEYS" in output and "MAX_TEXT_CHARS" in output and "0 of 3 bundles" in output, output
    assert output.count("MAX_JSON_KEYS") == 2, output
    assert peak - floor <= 6 * 20, f"peak {peak:.0f} MB, {peak - floor:.0f} MB over a minimal bundle's {floor:.0f} MB"
