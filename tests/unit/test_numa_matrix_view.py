"""The NUMA latency matrix from ingest to the host page, and a one-node host's skip on the page."""

from __future__ import annotations

import copy
import json
import re

import duckdb
import pytest

from fleetscope.ingest.bundle import BundleError, load_bundle


def cell(point: dict, cpu_node: int, mem_node: int, ns: float) -> dict:
    point = copy.deepcopy(point)
    point["experiment"] = "numa_matrix"
    point["params"].update(cpu=cpu_node * 8, cpu_node=cpu_node, mem_node=mem_node)
    point["samples"] = [ns, ns * 1.01, ns * 1.02]
    point["summary"] = {"min": ns, "median": ns * 1.01, "mean": ns * 1.01, "ci95_low": ns, "ci95_high": ns * 1.02,
                        "count": 3}
    return point


def test_two_nodes_make_a_two_by_two_matrix_with_the_ratio_to_local(bundles, cli, tmp_path):
    base = max(bundles.latency_points(page_policies=("thp",)), key=lambda p: p["params"]["working_set_bytes"])
    latency = {(0, 0): 90.0, (0, 1): 140.0, (1, 0): 150.0, (1, 1): 95.0}
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "numa_matrix", "status": "ok", "file": "results/numa_matrix.jsonl",
                                    "error": None, "wall_s": 2.0})
    bundles.write(manifest=manifest, results={
        "results/latency_sweep.jsonl": bundles.latency_points(),
        "results/numa_matrix.jsonl": [cell(base, c, m, ns) for (c, m), ns in latency.items()]})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = connection.execute("SELECT cpu_node, mem_node, cpu, ratio_to_local FROM numa_latency_matrix "
                                  "ORDER BY cpu_node, mem_node").fetchall()
    assert [row[:3] for row in rows] == [(0, 0, 0), (0, 1, 0), (1, 0, 8), (1, 1, 8)]
    assert [row[3] for row in rows] == pytest.approx([1.0, 140 / 90, 150 / 95, 1.0])
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "node1.html").read_text()
    spec = json.loads(re.search(r'id="numa-matrix-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))
    drawn = spec["layer"][0]["data"]
    records = drawn["values"] if "values" in drawn else spec["datasets"][drawn["name"]]
    assert sorted((record["cpu_node"], record["mem_node"]) for record in records) == sorted(latency)
    assert spec["layer"][0]["mark"]["type"] == "rect"


def bandwidth_cell(point: dict, cpu_node: int, mem_node: int, gbs: float) -> dict:
    point = copy.deepcopy(point)
    point.update(experiment="numa_matrix", kernel="bandwidth", metric="bandwidth", unit="GB/s")
    point["params"].update(op="read", threads=8, cpus=list(range(cpu_node * 8, cpu_node * 8 + 8)), cpu=None,
                           cpu_node=cpu_node, mem_node=mem_node, working_set_bytes=1 << 30)
    point["context"] = {"mem_pages_sampled": 2048, "mem_pages_on_node": 2048}
    point["samples"] = [gbs, gbs * 0.99, gbs * 1.01]
    point["summary"] = {"min": gbs * 0.99, "median": gbs, "mean": gbs, "ci95_low": gbs * 0.99,
                        "ci95_high": gbs * 1.01, "count": 3}
    return point


def test_the_bandwidth_matrix_beside_the_latency_matrix(bundles, cli, tmp_path):
    """Bandwidth and latency points of one numa_matrix file: each view takes its own metric, and the host
    page draws both heat maps."""
    chase = max(bundles.latency_points(page_policies=("thp",)), key=lambda p: p["params"]["working_set_bytes"])
    bandwidth = {(0, 0): 40.0, (0, 1): 22.0, (1, 0): 20.0, (1, 1): 38.0}
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "numa_matrix", "status": "ok", "file": "results/numa_matrix.jsonl",
                                    "error": None, "wall_s": 2.0})
    bundles.write(manifest=manifest, results={
        "results/latency_sweep.jsonl": bundles.latency_points(),
        "results/numa_matrix.jsonl": [cell(chase, 0, 0, 90.0), cell(chase, 0, 1, 140.0)]
        + [bandwidth_cell(chase, c, m, gbs) for (c, m), gbs in bandwidth.items()]})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    with duckdb.connect(str(db), read_only=True) as connection:
        rows = connection.execute("SELECT cpu_node, mem_node, threads, bytes_per_thread, pages_on_node, median_gb_s, "
                                  "ratio_to_local FROM numa_bandwidth_matrix ORDER BY cpu_node, mem_node").fetchall()
        latency_cells = connection.execute("SELECT count(*) FROM numa_latency_matrix").fetchone()[0]
    assert [row[:5] for row in rows] == [(c, m, 8, 1 << 30, 2048) for c, m in bandwidth]
    assert [row[5] for row in rows] == pytest.approx(list(bandwidth.values()))
    assert [row[6] for row in rows] == pytest.approx([1.0, 22 / 40, 20 / 38, 1.0])
    assert latency_cells == 2
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "node1.html").read_text()
    spec = json.loads(re.search(r'id="numa-bandwidth-chart-spec">(.*?)</script>', page, re.DOTALL).group(1))
    drawn = spec["layer"][0]["data"]
    records = drawn["values"] if "values" in drawn else spec["datasets"][drawn["name"]]
    assert sorted((record["cpu_node"], record["mem_node"], record["value"]) for record in records) == sorted(
        (c, m, gbs) for (c, m), gbs in bandwidth.items())
    assert spec["title"]["text"] == "NUMA bandwidth matrix"
    assert page.index('id="numa-matrix-chart"') < page.index('id="numa-bandwidth-chart"')


def test_a_one_node_host_shows_why_there_is_no_matrix(bundles, cli, tmp_path):
    reason = ("one NUMA node (node0: CPUs 0-1): no remote memory to measure, so there is no latency or bandwidth "
              "matrix")
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "numa_matrix", "status": "skipped", "file": None, "error": None,
                                    "notes": [reason], "wall_s": 0.0})
    bundles.write(manifest=manifest)
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    page = (out / "node1.html").read_text()
    # one experiment, two sections: its status and notes once, in the first; the second has no rows to show
    notes = re.search(r'<div class="warning" id="numa-matrix-notes">(.*?)</div>', page, re.DOTALL).group(1)
    assert notes.startswith("Not run: ") and reason in notes
    assert 'id="numa-bandwidth"' not in page


@pytest.mark.parametrize("params", [{"mem_node": "1"}, {"mem_node": -1}, {"cpu_node": 1024}, {"threads": 0},
                                    {"mem_node": None}])
def test_a_numa_point_with_a_bad_node_or_thread_count_is_refused(bundles, params):
    chase = max(bundles.latency_points(page_policies=("thp",)), key=lambda p: p["params"]["working_set_bytes"])
    point = bandwidth_cell(chase, 0, 0, 40.0)
    point["params"].update(params)
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "numa_matrix", "status": "ok", "file": "results/numa_matrix.jsonl",
                                    "error": None, "wall_s": 2.0})
    path = bundles.write(manifest=manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                                     "results/numa_matrix.jsonl": [point]})
    with pytest.raises(BundleError, match="numa_matrix"):
        load_bundle(path)
