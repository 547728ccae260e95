"""Batch ingest (issue 33): bundles are staged and derived together and a batch goes into the warehouse in one
transaction, yet a bad bundle inside a batch is refused alone with its file and field named, a re-collected
bundle inside a batch replaces its run, and the warehouse ends up holding, row for row, what loading each
bundle alone gives. Unchanged bundles are told by their folders' signatures: a stat per file, never trusted
past a change (the kernel's change time moves even when the size and modification time are put back)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import duckdb
import pytest

from fleetscope.analyze.derive import DERIVED_TABLES
from fleetscope.ingest import bundle as bundle_module
from fleetscope.ingest import load
from fleetscope.ingest.load import RUN_TABLES, ingest_bundles
from fleetscope.store.warehouse import open_warehouse

# Columns that record when or from where a row was loaded, not what it says.
WHEN = {"computed_at", "loaded_at", "bundle_path", "first_loaded_at"}


def every_row(database: Path) -> dict[str, list[tuple]]:
    """Every row of every run and derived table (and hosts), without the columns saying when."""
    rows = {}
    with duckdb.connect(str(database), read_only=True) as connection:
        for table in ("hosts", *RUN_TABLES, *DERIVED_TABLES):
            names = [name for (name,) in connection.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                [table]).fetchall() if name not in WHEN]
            listed = ", ".join(f'"{name}"' for name in names)
            rows[table] = sorted(connection.execute(f"SELECT {listed} FROM {table}").fetchall(), key=repr)
    return rows


def ingest(database: Path, paths: list[Path], **options) -> list[load.Outcome]:
    with open_warehouse(database) as connection:
        return list(ingest_bundles(connection, paths, **options))


def write_hosts(bundles, names: list[str], seed: int = 7) -> list[Path]:
    return [bundles.write(bundles.manifest(host=name), results={
        "results/latency_sweep.jsonl": bundles.latency_points(seed=seed + index)}) for index, name in enumerate(names)]


def test_a_bad_bundle_inside_a_batch_is_refused_alone_and_the_batch_loads_as_each_alone(bundles, tmp_path):
    good = write_hosts(bundles, ["n0", "n1", "n2", "n3", "n4"])
    # its last point is found bad after its host, run, facts and every earlier point went into the stage
    points = bundles.latency_points()
    points[-1]["samples"][-1] = 1e999
    bad = bundles.write(bundles.manifest(host="n2-bad"), results={"results/latency_sweep.jsonl": points})
    batch = tmp_path / "batch.duckdb"
    outcomes = ingest(batch, [*good[:2], bad, *good[2:]], batch=32)
    assert [outcome.action for outcome in outcomes] == ["loaded"] * 2 + ["REFUSED"] + ["loaded"] * 3
    assert [outcome.path for outcome in outcomes] == [*good[:2], bad, *good[2:]]
    assert f"latency_sweep.jsonl: line {len(points)}: at $.samples[4]: Infinity is not a finite number" \
        in outcomes[2].detail

    alone = tmp_path / "alone.duckdb"
    assert [outcome.action for outcome in ingest(alone, good, batch=1)] == ["loaded"] * 5
    expected = every_row(alone)
    assert expected["points"] and expected["inferred_levels"] and expected["flags"], "the bundles derived nothing"
    assert every_row(batch) == expected
    with duckdb.connect(str(batch), read_only=True) as connection:
        for table in (*RUN_TABLES, *DERIVED_TABLES):
            assert connection.execute(f"SELECT count(*) FROM {table} WHERE host = 'n2-bad'").fetchone()[0] == 0, table
        refused = connection.execute("SELECT bundle_path, host, reason FROM refused_bundles").fetchall()
    assert refused == [(str(bad), "n2-bad", outcomes[2].detail)]


def test_a_re_collected_bundle_inside_a_batch_replaces_its_run_and_the_others_stay(bundles, tmp_path):
    hosts = write_hosts(bundles, ["m0", "m1", "m2", "m3"])
    db = tmp_path / "fleet.duckdb"
    assert [outcome.action for outcome in ingest(db, hosts)] == ["loaded"] * 4
    # m1 re-collected: other values in every point, and a different experiment wall time
    manifest = bundles.manifest(host="m1")
    manifest["experiments"][0]["wall_s"] = 40.5
    bundles.write(manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(seed=99)})
    outcomes = ingest(db, hosts, batch=4)
    assert [outcome.action for outcome in outcomes] == ["unchanged", "replaced", "unchanged", "unchanged"]

    fresh = tmp_path / "fresh.duckdb"
    ingest(fresh, hosts, batch=1)
    assert every_row(db) == every_row(fresh)
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT wall_s FROM experiments WHERE host = 'm1'").fetchall() == [(40.5,)]


def test_a_folder_named_twice_in_one_ingest_loads_once(bundles, tmp_path):
    first, second = write_hosts(bundles, ["t0", "t1"])
    outcomes = ingest(tmp_path / "fleet.duckdb", [first, second, first], batch=8)
    assert [outcome.action for outcome in outcomes] == ["loaded", "loaded", "unchanged"]


def test_unchanged_bundles_are_told_by_their_signatures_and_a_change_put_back_in_time_is_not(
        bundles, tmp_path, monkeypatch):
    hosts = write_hosts(bundles, ["s0", "s1", "s2"])
    # a folder changed in the last second is read and hashed every time: its times could yet stay as they are
    time.sleep(bundle_module.SIGNATURE_SETTLE_NS / 1e9 + 0.1)
    db = tmp_path / "fleet.duckdb"
    assert [outcome.action for outcome in ingest(db, hosts)] == ["loaded"] * 3
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM bundle_signatures").fetchone()[0] == 3

    # unchanged: told without reading a file (the hash of the files is not asked for)
    def no_hashing(_path):
        raise AssertionError("an unchanged folder with a signature on record was read and hashed")
    with monkeypatch.context() as patched:
        patched.setattr(load, "stated_content", no_hashing)
        assert [outcome.action for outcome in ingest(db, hosts)] == ["unchanged"] * 3

    # a file the manifest does not name changes: the signature differs, the hash says unchanged
    (hosts[0] / "raw" / "chase.stderr.log").write_text("chase: self-check passed again\n", encoding="utf-8")
    # the manifest rewritten with the same size, its modification time put back: its change time still moved
    manifest_path = hosts[1] / "manifest.json"
    status = manifest_path.stat()
    text = manifest_path.read_text(encoding="utf-8")
    assert '"wall_s": 31.2' in text
    manifest_path.write_text(text.replace('"wall_s": 31.2', '"wall_s": 31.3'), encoding="utf-8")
    os.utime(manifest_path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert manifest_path.stat().st_size == status.st_size and manifest_path.stat().st_mtime_ns == status.st_mtime_ns
    assert [outcome.action for outcome in ingest(db, hosts)] == ["unchanged", "replaced", "unchanged"]
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT wall_s FROM experiments WHERE host = 's1'").fetchall() == [(31.3,)]


def test_a_signature_on_record_never_skips_a_run_the_warehouse_holds_with_other_content(bundles, tmp_path):
    """The signature vouches for the content hash it was kept with, and for that alone."""
    (host,) = write_hosts(bundles, ["u0"])
    time.sleep(bundle_module.SIGNATURE_SETTLE_NS / 1e9 + 0.1)
    db = tmp_path / "fleet.duckdb"
    assert [outcome.action for outcome in ingest(db, [host])] == ["loaded"]
    with duckdb.connect(str(db)) as connection:
        connection.execute("UPDATE bundle_signatures SET content_sha256 = 'stale'")
    assert [outcome.action for outcome in ingest(db, [host])] == ["unchanged"]  # told by the hash, signed again
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT content_sha256 = (SELECT content_sha256 FROM runs) "
                                  "FROM bundle_signatures").fetchone() == (True,)


def test_a_folder_signature_changes_with_any_entry_and_is_none_while_the_folder_settles(tmp_path):
    settle_s = bundle_module.SIGNATURE_SETTLE_NS / 1e9 + 0.1
    folder = tmp_path / "bundle"
    (folder / "raw").mkdir(parents=True)
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    assert bundle_module.folder_signature(folder) is None  # just written
    time.sleep(settle_s)
    signature = bundle_module.folder_signature(folder)
    assert signature is not None and bundle_module.folder_signature(folder) == signature
    (folder / "raw" / "late.log").write_text("x", encoding="utf-8")
    old = time.time_ns() - 10 * bundle_module.SIGNATURE_SETTLE_NS
    for path in (folder / "raw" / "late.log", folder / "raw"):
        os.utime(path, ns=(old, old))
    # the change time is the kernel's: an entry written a moment ago keeps the folder unsigned whatever its mtime
    assert bundle_module.folder_signature(folder) is None
    time.sleep(settle_s)
    assert bundle_module.folder_signature(folder) not in (None, signature)


@pytest.mark.parametrize("batch", [0, -3])
def test_a_batch_holds_at_least_one_bundle(batch, tmp_path):
    with open_warehouse(tmp_path / "fleet.duckdb") as connection, pytest.raises(ValueError):
        list(ingest_bundles(connection, [], batch=batch))


def test_the_cli_takes_a_batch_size_and_refuses_one_of_none(bundles, cli, tmp_path):
    write_hosts(bundles, ["c0", "c1", "c2"])
    db = tmp_path / "fleet.duckdb"
    result = cli("ingest", bundles.results_dir, "--db", db, "--batch", "2")
    assert result.returncode == 0, result.stderr
    assert [line.split()[0] for line in result.stdout.splitlines()[:-1]] == ["loaded"] * 3
    refused = cli("ingest", bundles.results_dir, "--db", db, "--batch", "0")
    assert refused.returncode == 2 and "--batch: must be 1 or more" in refused.stderr
    assert json.loads(cli("query", "SELECT count(*) AS n FROM runs", "--format", "json", "--db", db).stdout) == [{"n": 3}]


def test_a_fleet_of_whole_runs_loads_in_one_batch_row_for_row_as_one_at_a_time(bundle_tools, tmp_path):
    """Every experiment of the default run (tests/fleet_bundles.py: three CPU groups, values scaled per group,
    one host's DRAM slowed), derived set-based for the batch (fleetscope.analyze.batch_rows: each derive query
    once for all its runs), gives the rows each run gives loaded alone, in every run and derived table."""
    from fleet_bundles import write_fleet
    builder_class, _ = bundle_tools
    write_fleet(builder_class(tmp_path / "fleet"), hosts_per_group=3)  # rpl-03 (slow DRAM, two runs) among them
    paths = sorted(path.parent for path in (tmp_path / "fleet").glob("*/*/manifest.json"))
    assert len(paths) == 10
    alone, together = tmp_path / "alone.duckdb", tmp_path / "together.duckdb"
    assert {outcome.action for outcome in ingest(alone, paths, batch=1)} == {"loaded"}
    assert {outcome.action for outcome in ingest(together, paths, batch=32)} == {"loaded"}
    expected = every_row(alone)
    assert expected["inferred_levels"] and expected["flags"] and expected["firmware_claims"], "nothing derived"
    found = every_row(together)
    for table in expected:
        assert found[table] == expected[table], f"{table}: a batch's rows differ from one at a time"


def test_a_derive_query_one_run_breaks_for_its_batch_fails_that_run_alone(bundles, tmp_path, monkeypatch):
    """Derive asks each query once for the whole batch, so a query one host's rows break (DuckDB out of
    memory on repeated points: 160 copies of a core_clock point did) failed every run of the batch: a good
    host was refused beside the bad one. The failed runs are derived again, each alone, and only the run
    that breaks it alone is refused. The breakage here is DuckDB's own error, raised for any batch the bad
    run is in, as the real query raised it."""
    from fleetscope.analyze import derive

    first = derive.DERIVATIONS[0]

    def breaks_with_the_bad_run(batch, key, computed):
        if ("bad" in {host for _unused, host in batch.keys}):
            raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate block")
        return first.rows(batch, key, computed)

    monkeypatch.setattr(derive, "DERIVATIONS", (derive.Derivation(first.table, breaks_with_the_bad_run),
                                                *derive.DERIVATIONS[1:]))
    good = write_hosts(bundles, ["good", "also-good"])
    bad = write_hosts(bundles, ["bad"], seed=11)
    outcomes = ingest(tmp_path / "fleet.duckdb", [good[0], *bad, good[1]], batch=32)
    assert [outcome.action for outcome in outcomes] == ["loaded", "REFUSED", "loaded"], outcomes
    assert "Out of Memory Error" in outcomes[1].detail and "bad" in outcomes[1].detail
