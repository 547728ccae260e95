"""A hybrid two-node host's page in headless Chromium: the idle latency per level with each core kind's
dots side by side and the NUMA latency matrix are drawn, with their marks, without console messages; a
two-kind host's per-kind sections (latency curve, tlb, write cost, bandwidth, SAXPY, affinity, smt: the
host of tests/core_kind_bundles.py) each draw every kind's marks; and the summary shows one inferred
hierarchy per core kind and the inferred-levels table names each row's kind."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import hybrid_bundles
import pytest
from core_kind_bundles import write_hybrid
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


def open_page(bundles, cli, browser, tmp_path, host: str) -> None:
    """Ingest the bundles written, report them, and open the host's page: drawn, without console messages."""
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    loaded = browser.open(out / f"{host}.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"


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
    open_page(bundles, cli, browser, tmp_path, "node1")
    assert browser.evaluate(PROBE) == {"zero_queue": 2 * len(zero_queue), "numa": 4}


# Each per-kind section's chart: how many marks of each kind of mark it draws.
SECTIONS_PROBE = """(() => {
  const marks = {};
  for (const id of ['latency', 'tlb', 'write-cost', 'bandwidth', 'saxpy', 'affinity', 'smt', 'thread-sweep']) {
    const svg = document.querySelector('#' + id + '-chart svg');
    marks[id] = svg ? {
      lines: svg.querySelectorAll('.mark-line.role-mark path').length,
      dashes: Array.from(svg.querySelectorAll('.mark-line.role-mark path')).map(p => p.getAttribute('stroke-dasharray')),
      symbols: svg.querySelectorAll('.mark-symbol.role-mark path').length,
      bars: svg.querySelectorAll('.mark-rect.role-mark path').length,
      legend: Array.from(svg.querySelectorAll('.role-legend-label text')).map(t => t.textContent),
    } : null;
  }
  return marks;
})()"""


def test_every_per_kind_section_draws_each_kinds_marks_without_console_messages(bundles, cli, browser, tmp_path):
    write_hybrid(bundles)
    open_page(bundles, cli, browser, tmp_path, "hybrid")
    marks = browser.evaluate(SECTIONS_PROBE)
    for section in ("latency", "tlb", "saxpy"):  # lines: one per kind (and policy ...)
        legend = marks[section]["legend"]
        assert any(label.startswith("P-core") for label in legend), (section, legend)
        assert any(label.startswith("E-core") for label in legend), (section, legend)
        assert marks[section]["lines"] >= 2, (section, marks[section])
    # bandwidth: each op's colour, solid on the P-core and dashed on the E-core (the subtitle says so)
    dashes = marks["bandwidth"]["dashes"]
    assert len(set(dashes)) == 2 and dashes.count(dashes[0]) * 2 == len(dashes) >= 2, dashes
    # write cost: read and read-modify-write per level, for each kind
    assert {"P-core · read", "E-core · read-modify-write"} <= set(marks["write-cost"]["legend"])
    assert marks["write-cost"]["symbols"] >= 4
    # affinity: every thread of every repeat, coloured by the kind(s) it ran on
    assert set(marks["affinity"]["legend"]) == {"P-core", "E-core", "P-core + E-core"}
    assert marks["affinity"]["symbols"] == 16  # 2 placements x 2 workloads x 2 repeats x 2 threads
    assert marks["smt"]["bars"] == 3
    # thread sweep: one line per op through every step, each step's point shaped by the kind it added
    sweep = marks["thread-sweep"]
    assert sweep["lines"] >= 1 and sweep["symbols"] >= 2 * sweep["lines"], sweep
    assert {"P-core, one per core", "E-core, one per core"} <= set(sweep["legend"]), sweep


HIERARCHY_PROBE = """(() => {
  const lines = [...document.querySelectorAll('#summary-kind-levels li')].map(li => li.textContent.trim());
  const table = document.querySelector('#inferred-levels');
  const headers = table ? [...table.querySelectorAll('thead th')].map(th => th.textContent.trim()) : [];
  const kinds = table ? [...table.querySelectorAll('tbody tr')].map(tr => tr.cells[0].textContent.trim()) : [];
  const svg = document.querySelector('#latency-chart svg');
  return {lines, headers: headers.slice(0, 2), kinds: [...new Set(kinds)],
          latency_lines: svg ? svg.querySelectorAll('.mark-line.role-mark path').length : null,
          level_rules: svg ? svg.querySelectorAll('.mark-rule.role-mark line').length : null};
})()"""


def test_the_summary_shows_each_kinds_hierarchy_without_console_messages(bundles, cli, browser, tmp_path):
    manifest = bundles.manifest()
    manifest["facts"]["topology"] = hybrid_topology()
    bundles.write(manifest, results={"results/latency_sweep.jsonl": [
        point for kind in hybrid_bundles.KINDS for point in hybrid_bundles.sweep(kind)]})
    open_page(bundles, cli, browser, tmp_path, "node1")
    found = browser.evaluate(HIERARCHY_PROBE)
    assert [line.split(":")[0] for line in found["lines"]] == ["P-core (CPU 4)", "E-core (CPU 12)"]
    assert all("; L2 " in line and "; DRAM " in line for line in found["lines"])
    assert found["headers"] == ["core kind", "CPU"] and found["kinds"] == ["P-core", "E-core"]
    assert found["latency_lines"] and found["level_rules"]  # the curve and the fastest kind's levels are drawn
    box = browser.box("#summary-kind-levels")
    assert box and box["bottom"] <= 900 and box["right"] > box["left"]  # on the first screen
    browser.screenshot(tmp_path / "hierarchy.png")
    table = browser.box("#inferred-levels")
    shot = browser.devtools.call("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip={
        "x": table["left"], "y": table["top"], "width": table["right"] - table["left"],
        "height": table["bottom"] - table["top"], "scale": 1})
    (tmp_path / "inferred-levels.png").write_bytes(base64.b64decode(shot["data"]))
