"""The view host_headlines (one row per host: its latest run's headline figures, in SQL for `fleetscope query`
and the duckdb shell) holds the numbers the pages, compare, check and the OpenMetrics export compute in Python
(fleetscope.report.fleet.run_values), on fleets of real bundles, a host with two core kinds (its fastest kind's
levels), the example bundle (one page policy) and the shipped reference hosts (a relative curve has no level
latency)."""

from __future__ import annotations

import pytest
from core_kind_bundles import write_hybrid

from fleetscope.report import fleet
from fleetscope.store.warehouse import open_read_only

# view column -> fleet column
RENAMED = {"flags": "flagged", **{f"{level}_size_bytes": f"{level}_size" for level in ("l1", "l2", "l3", "l4")},
           **{f"{level}_size_{end}_bytes": f"{level}_size_{end}" for level in ("l1", "l2", "l3", "l4")
              for end in ("low", "high")},
           **{f"{level}_latency_ns": f"{level}_latency" for level in ("l1", "l2", "l3", "l4", "dram")}}
IDENTITY = {"host", "run_id", "started_at", "is_reference"}


def assert_view_matches_the_fleet(db) -> list[dict]:
    with open_read_only(db) as connection:
        cursor = connection.execute("SELECT * FROM host_headlines ORDER BY host")
        columns = [description[0] for description in cursor.description]
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
        latest = {run.host: run for run in fleet.runs(connection) if run.recency == 1}
        keys = [run.key for run in latest.values()]
        values = fleet.run_values(fleet.batch(connection, keys).rows, keys)
    assert [row["host"] for row in rows] == sorted(latest)
    for row in rows:
        figures = values[(row["run_id"], row["host"])]
        for column, value in row.items():
            if column in IDENTITY:
                continue
            expected = figures.get(RENAMED.get(column, column))
            wanted = pytest.approx(expected, rel=1e-12) if isinstance(expected, (int, float)) else expected
            assert value == wanted if expected is not None else value is None, \
                (row["host"], column, value, expected)
        assert set(figures) <= {RENAMED.get(column, column) for column in columns}, set(figures) - set(columns)
    return rows


def test_the_view_holds_the_fleet_s_figures(two_nights, synthetic_fleet):
    rows = assert_view_matches_the_fleet(two_nights[1])
    assert {row["host"]: round(row["dram_latency_ns"]) for row in rows} == {"n1-01": 222, "rpl-03": 218, "zen3-01": 168}
    # every L3 has its size, or on a coarse curve its bracket only (method version 11)
    assert all(row["l3_size_low_bytes"] and row["l3_size_high_bytes"] and row["flags"] is not None for row in rows)
    assert_view_matches_the_fleet(synthetic_fleet[1])


def test_two_core_kinds_one_policy_and_reference_hosts(bundles, cli, tmp_path):
    write_hybrid(bundles)
    bundles.write(bundles.manifest(host="thp-only", run_id="20261123T034500Z-b2c3d4"),
                  results={"results/latency_sweep.jsonl": bundles.latency_points(page_policies=("4k",))})
    db = tmp_path / "fleet.duckdb"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    loaded = cli("reference", "load", "ref-graviton2-neoverse-n1", "ref-n100-gracemont", "--db", db,
                 "--results", tmp_path / "references")  # a relative curve (tinymembench) and an absolute one
    assert loaded.returncode == 0, loaded.stderr
    rows = {row["host"]: row for row in assert_view_matches_the_fleet(db)}
    assert rows["hybrid"]["l1_latency_ns"] is not None and rows["thp-only"]["l2_size_bytes"] is not None
    assert rows["ref-graviton2-neoverse-n1"]["is_reference"] and rows["ref-graviton2-neoverse-n1"]["l1_latency_ns"] is None
    assert rows["ref-graviton2-neoverse-n1"]["l1_size_bytes"] and rows["ref-n100-gracemont"]["dram_latency_ns"] > 50


def test_the_compute_figures_are_the_fleet_s(compute_fleet):
    rows = {row["host"]: row for row in assert_view_matches_the_fleet(compute_fleet[1])}
    fast, slow = rows["zen-1"], rows["slow-1"]
    assert fast["clock_1_core_ghz"] and fast["fp64_1_core_gflop_s"] and fast["fp64_flop_per_cycle"]
    # slow-1's clock with both cores active, and the FLOP/s under it, were written at 0.88 x; its one-core figures not
    assert slow["clock_all_cores_ghz"] == pytest.approx(0.88 * fast["clock_all_cores_ghz"], rel=1e-9)
    assert slow["fp64_all_cores_gflop_s"] == pytest.approx(0.88 * fast["fp64_all_cores_gflop_s"], rel=1e-9)
    assert slow["clock_1_core_ghz"] == pytest.approx(fast["clock_1_core_ghz"], rel=1e-12)
