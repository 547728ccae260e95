"""Inference on ingest: derived rows are computed in the bundle's transaction, replaced with the bundle,
and recomputed when the stored method version is not this fleetscope's."""

from __future__ import annotations

import duckdb

from fleetscope.analyze.inference import INFERENCE_VERSION


def levels(db) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as connection:
        return connection.execute("SELECT page_policy, level, capacity_bytes, sysfs_size_bytes, size_low_bytes, "
                                  "size_high_bytes, size_method FROM inferred_levels "
                                  "ORDER BY page_policy DESC, level_index").fetchall()


def test_ingest_infers_levels_beside_sysfs_for_each_page_policy(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    thp = [row for row in levels(db) if row[0] == "thp"]
    # one point per octave: each level's size is a bracket of two sweep sizes around its onset (the bundle's steps,
    # conftest.LEVELS, start rising an octave before their capacity); sysfs' size is the best estimate where the
    # bracket holds it. The 3 MiB L3 shows in one point, 2 MiB, between a rise and a rise: a level of its own
    # beside the 32 MiB sysfs reports, with its bracket and no number (too coarse for one)
    assert thp == [("thp", "L1", 32768, 32768, 16384, 32768, "sysfs"),
                   ("thp", "L2", 1048576, 1048576, 524288, 1048576, "sysfs"),
                   ("thp", "L3", None, 33554432, 2097152, 4194304, None),
                   ("thp", "DRAM", None, None, None, None, None)]
    assert {row[0] for row in levels(db)} == {"thp", "4k"}
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT inference_version FROM inference_runs").fetchall() == [(INFERENCE_VERSION,)]


def test_a_run_inferred_by_another_method_version_is_recomputed_on_the_next_ingest(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    before = levels(db)
    with duckdb.connect(str(db)) as connection:
        connection.execute("UPDATE inference_runs SET inference_version = 0")
        connection.execute("DELETE FROM inferred_levels")
    again = cli("ingest", bundles.results_dir, "--db", db)
    assert again.returncode == 0
    assert "unchanged" in again.stdout and f"recomputed with method version {INFERENCE_VERSION}" in again.stdout
    assert levels(db) == before
    assert "recomputed" not in cli("ingest", bundles.results_dir, "--db", db).stdout


def test_a_replaced_bundle_replaces_its_derived_rows(bundles, cli, tmp_path):
    db = tmp_path / "fleet.duckdb"
    bundles.write()
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    bundles.write(results={"results/latency_sweep.jsonl": bundles.latency_points(page_policies=("thp",))})
    result = cli("ingest", bundles.results_dir, "--db", db)
    assert result.returncode == 0 and result.stdout.startswith("replaced")
    assert {row[0] for row in levels(db)} == {"thp"}
    with duckdb.connect(str(db), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM inference_runs").fetchone()[0] == 1
