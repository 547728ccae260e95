"""A two-LLC-domain host's page in headless Chromium (the Arm GB10's real topology, with a synthetic
two-node NUMA matrix): the NUMA latency and bandwidth heat maps and the c2c within/across-domain heat
map are drawn, with their marks, without console messages."""

from __future__ import annotations

import copy

import pytest
from sysfs_facts import read

pytestmark = pytest.mark.browser

PROBE = """(() => {
  const count = (id) => {
    const svg = document.querySelector('#' + id + ' svg');
    return svg ? svg.querySelectorAll('.mark-rect.role-mark path').length : null;
  };
  return {numa: count('numa-matrix-chart'), bandwidth: count('numa-bandwidth-chart'),
          domains: count('c2c-domains-chart'), c2c: count('c2c-chart')};
})()"""


def point(base: dict, value: float, **changes) -> dict:
    point = copy.deepcopy(base)
    params = changes.pop("params")
    point.update(changes)
    point["params"] = {**point["params"], **params}
    point["samples"] = [value, value * 1.01, value * 0.99]
    point["summary"] = {"min": value * 0.99, "median": value, "mean": value, "ci95_low": value * 0.99,
                        "ci95_high": value * 1.01, "count": 3}
    return point


def test_numa_and_llc_domain_heat_maps_render_without_console_messages(bundles, cli, browser, tmp_path):
    base = max(bundles.latency_points(page_policies=("thp",)), key=lambda p: p["params"]["working_set_bytes"])
    nodes = [(c, m) for c in (0, 1) for m in (0, 1)]
    numa = [point(base, 95.0 if c == m else 150.0, experiment="numa_matrix", params={"cpu": c * 10, "cpu_node": c,
                                                                                   "mem_node": m}) for c, m in nodes]
    numa += [point(base, 38.0 if c == m else 21.0, experiment="numa_matrix", kernel="bandwidth", metric="bandwidth",
                   unit="GB/s", params={"cpu": None, "cpus": list(range(c * 10, c * 10 + 10)), "threads": 10,
                                        "cpu_node": c, "mem_node": m}) for c, m in nodes]
    cpus = [0, 1, 2, 10, 11, 12]
    c2c = [point(base, (30.0 if a < 10 else 40.0) if (a < 10) == (b < 10) else 120.0, experiment="c2c",
                 kernel="c2c", params={"cpu_a": a, "cpu_b": b, "smt_siblings": False, "same_core": False,
                                       "same_package": True, "numa_node_a": 0, "numa_node_b": 0})
           for a in cpus for b in cpus if a != b]
    topology = read("arm-gb10-biglittle")
    topology.pop("numa")
    manifest = bundles.manifest()
    manifest["facts"]["topology"] = topology
    manifest["experiments"] += [{"name": name, "status": "ok", "file": f"results/{name}.jsonl", "error": None,
                                 "wall_s": 1.0} for name in ("numa_matrix", "c2c")]
    bundles.write(manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                     "results/numa_matrix.jsonl": numa, "results/c2c.jsonl": c2c})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0

    loaded = browser.open(out / "node1.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    assert browser.evaluate(PROBE) == {"numa": 4, "bandwidth": 4, "domains": 4, "c2c": len(c2c)}
