"""A hybrid two-node host's page in headless Chromium: the idle latency per level with each core kind's
dots side by side and the NUMA latency matrix are drawn, with their marks, without console messages."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from sysfs_facts import read

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
PROBE = """(() => {
  const count = (id, selector) => {
    const svg = document.querySelector('#' + id + ' svg');
    return svg ? svg.querySelectorAll(selector).length : null;
  };
  return {
    zero_queue: count('zero-queue-chart', '.mark-symbol.role-mark path'),
    numa: count('numa-matrix-chart', '.mark-rect.role-mark path'),
  };
})()"""


def hybrid_topology() -> dict:
    topology = read("intel-raptorlake-hybrid")
    topology.pop("numa")
    return topology


def scaled(point: dict, scale: float, **params) -> dict:
    point = copy.deepcopy(point)
    point["params"].update(params)
    point["samples"] = [value * scale for value in point["samples"]]
    point["summary"] = {key: value * scale if key != "count" else value for key, value in point["summary"].items()}
    return point


def test_per_kind_and_numa_charts_render_without_console_messages(bundles, cli, browser, tmp_path):
    zero_queue = [json.loads(line) for line in next((ROOT / "tests/fixtures/default_run/results").glob(
        "*/*/results/zero_queue.jsonl")).read_text().splitlines()]
    dram = max(bundles.latency_points(page_policies=("thp",)), key=lambda p: p["params"]["working_set_bytes"])
    numa = [dict(scaled(dram, 1.0 if cpu_node == mem_node else 1.6, cpu=cpu_node * 8, cpu_node=cpu_node,
                        mem_node=mem_node), experiment="numa_matrix") for cpu_node in (0, 1) for mem_node in (0, 1)]
    manifest = bundles.manifest()
    manifest["facts"]["topology"] = hybrid_topology()
    manifest["experiments"] += [{"name": name, "status": "ok", "file": f"results/{name}.jsonl", "error": None,
                                 "wall_s": 1.0} for name in ("zero_queue", "numa_matrix")]
    bundles.write(manifest, results={
        "results/latency_sweep.jsonl": bundles.latency_points(),
        "results/zero_queue.jsonl": [scaled(p, 1.0, cpu=4) for p in zero_queue]
                                    + [scaled(p, 1.3, cpu=12) for p in zero_queue],
        "results/numa_matrix.jsonl": numa})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0

    loaded = browser.open(out / "node1.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    assert browser.evaluate(PROBE) == {"zero_queue": 2 * len(zero_queue), "numa": 4}
