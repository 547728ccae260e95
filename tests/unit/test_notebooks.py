"""The analysis notebooks and the package logic behind them (fleetscope.compare): hosts side by side,
grouped by CPU model; one host's drift across runs, reported only when large AND significant; both
notebooks run headless and export to HTML."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleetscope import compare

ANALYSIS = Path(__file__).resolve().parents[2] / "analysis"
MARIMO = Path(sys.executable).parent / "marimo"
LATER_RUN = "20261129T034500Z-d4e5f6"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory, bundle_tools):
    """node1 twice (the later run's L2 30% slower), node2 once with another CPU model."""
    BundleBuilder, run_cli = bundle_tools  # noqa: N806 (a class)

    root = tmp_path_factory.mktemp("notebooks")
    bundles = BundleBuilder(root / "results")
    bundles.write()
    later = bundles.manifest(run_id=LATER_RUN, started_at="2026-11-29T03:45:00Z", finished_at="2026-11-29T03:47:00Z")
    slower = bundles.latency_points(seed=8)
    for point in slower:
        if 64 * 1024 <= point["params"]["working_set_bytes"] <= 512 * 1024:
            point["samples"] = [value * 1.3 for value in point["samples"]]
            point["summary"] = {key: value * 1.3 if key != "count" else value for key, value in point["summary"].items()}
    bundles.write(later, results={"results/latency_sweep.jsonl": slower})
    other = bundles.manifest(host="node2")
    other["facts"]["cpu"]["model_name"] = "Intel Xeon Gold 6248"
    bundles.write(other, results={"results/latency_sweep.jsonl": bundles.latency_points(seed=9)})
    db = root / "fleet.duckdb"
    proc = run_cli("ingest", bundles.results_dir, "--db", db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return db


def test_hosts_group_by_cpu_model_and_levels_sit_side_by_side(warehouse):
    connection = compare.connect(warehouse)
    hosts = compare.hosts(connection)
    assert hosts["host"].to_list() == ["node1", "node2"]
    assert hosts.filter(hosts["host"] == "node1")["run_id"][0] == LATER_RUN
    assert compare.groups(hosts, "cpu_model_name") == {"AMD EPYC 9B14": ["node1"], "Intel Xeon Gold 6248": ["node2"]}
    runs = compare.latest_runs_of(hosts, ["node1", "node2"])
    levels = compare.level_table(connection, runs)
    assert set(levels["host"]) == {"node1", "node2"}
    assert levels.filter(levels["level"] == "L1")["capacity_bytes"].to_list() == [32768, 32768]
    assert levels["bandwidth_gb_s"].null_count() == levels.height  # no bandwidth sweep in these runs
    assert "inferred_level_bandwidth" in levels["bandwidth_note"][0]
    assert compare.latency_curves(connection, runs).height == 2 * 34
    assert compare.latency_overlay_chart(compare.latency_curves(connection, runs), levels).to_dict()


def test_drift_reports_the_level_that_moved_by_threshold_and_test(warehouse, bundle_tools):
    connection = compare.connect(warehouse)
    drift = compare.level_drift(connection, "node1", bundle_tools[0].run_id, LATER_RUN)
    rows = {row["level"]: row for row in drift.iter_rows(named=True)}
    assert rows["L2"]["moved"] and rows["L2"]["change"] == pytest.approx(0.3, abs=0.05)
    assert rows["L2"]["p_value"] < 0.001
    assert not rows["L1"]["moved"] and abs(rows["L1"]["change"]) < 0.05
    assert compare.describe_drift(drift)[0].startswith("L2: 4.2")
    # the same change judged against a higher threshold is not reported
    assert not compare.level_drift(connection, "node1", bundle_tools[0].run_id, LATER_RUN, threshold=0.5)["moved"].any()




def test_mann_whitney_exact_and_approximate():
    assert compare.mann_whitney_u([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == (0.0, pytest.approx(0.1))
    assert compare.mann_whitney_u([4.0, 5.0, 6.0], [1.0, 2.0, 3.0]) == (9.0, pytest.approx(0.1))
    assert compare.mann_whitney_u([1.0, 1.0], [1.0, 1.0])[1] == 1.0
    # past 20 samples per side: normal approximation, U = 190 of 900, z = (450 - 190 - 0.5) / sqrt(900 * 61 / 12)
    u_value, p_value = compare.mann_whitney_u([float(value) for value in range(30)], [value + 10.5 for value in range(30)])
    assert u_value == 190 and p_value == pytest.approx(math.erfc(259.5 / math.sqrt(4575) / math.sqrt(2)))


@pytest.mark.parametrize("notebook, arguments, expected", [
    ("compare_hierarchies.py", [], ["Memory hierarchies side by side", "Inferred levels", "node2"]),
    ("run_drift.py", ["--host", "node1"], ["Drift of node1", "L2: 4.2"]),
])
def test_notebooks_run_headless_and_export_html(warehouse, tmp_path, notebook, arguments, expected):
    out = tmp_path / "notebook.html"
    proc = subprocess.run([str(MARIMO), "export", "html", str(ANALYSIS / notebook), "-o", str(out), "--",
                           "--db", str(warehouse), *arguments],
                          capture_output=True, text=True, timeout=240, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    html = out.read_text()
    assert '"type": "error"' not in html
    for text in expected:
        assert text in html, text
