"""A host page in headless Chromium: no console message of any level, no network request, the latency curve
drawn with its sysfs rules and the inferred levels marked, no summary card clipping what it holds (the hierarchy
table's five columns), a loaded-latency knee drawn as the interval it lies in
(and a flat curve named as having none), and core-to-core cells that print alike coloured alike."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser

LATENCY_PROBE = """(() => {
  const svg = document.querySelector('#latency-chart svg');
  if (!svg) return null;
  return {
    lines: svg.querySelectorAll('.mark-line.role-mark path').length,
    symbols: svg.querySelectorAll('.mark-symbol.role-mark path').length,
    rules: svg.querySelectorAll('.mark-rule.role-mark line').length,
    bands: svg.querySelectorAll('.mark-rect.role-mark path').length,
    labels: Array.from(svg.querySelectorAll('.mark-text.role-mark text')).map(t => t.textContent),
    axisLabels: Array.from(svg.querySelectorAll('.role-axis-label text')).map(t => t.textContent),
  };
})()"""


def test_the_host_page_draws_its_latency_curve_without_console_messages(bundles, cli, browser, tmp_path):
    bundles.write()
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0

    loaded = browser.open(out / "node1.html")
    assert loaded.console == []
    assert loaded.charts_state == "drawn"
    assert [url for url in loaded.requests if not url.startswith("file:")] == []
    chart = browser.evaluate(LATENCY_PROBE)
    assert chart is not None, "no <svg> inside #latency-chart"
    page_policies = {point["params"]["page_policy"] for point in bundles.latency_points()}
    assert chart["lines"] >= 2 * len(page_policies)  # median and minimum per page policy
    assert chart["symbols"] >= len(bundles.latency_points())
    sysfs = ["L1d (sysfs)", "L2 (sysfs)", "L3 (sysfs)"]
    # each inferred level is labelled with its size bracket (and best estimate where there is one)
    inferred = [label for label in chart["labels"] if re.match(r"L\d+ [\d.]+–[\d.]+ [KMG]iB", label)]
    assert [label for label in chart["labels"] if label in sysfs] == sysfs
    assert len(inferred) >= 2 and inferred[0].startswith("L1 16–32 KiB · sysfs 32 KiB")
    assert chart["rules"] == len(sysfs) + len(inferred) and chart["bands"] == len(inferred)
    assert {"4 KiB", "1 MiB", "256 MiB"} <= set(chart["axisLabels"])
    # every summary card holds what it shows: at 1,300 px the hierarchy table's latency and cycles columns once
    # ran past its card's edge, cut off
    assert browser.evaluate("document.getElementById('summary-levels') !== null")
    for width in (1300, 1100):
        browser.resize(width, 900)
        try:
            clipped = browser.evaluate(CLIPPED_CARDS)
        finally:
            browser.resize(*browser.size)
        assert clipped == [], (width, clipped)


# the titles of the summary cards whose content is wider than the card
CLIPPED_CARDS = """Array.from(document.querySelectorAll('#summary .card'))
  .filter(card => card.scrollWidth > card.clientWidth + 1).map(card => card.querySelector('h2').textContent)"""


LOADED_PROBE = """(() => {
  const svg = document.querySelector('#loaded-latency-chart svg');
  return {
    bands: svg.querySelectorAll('.mark-rect.role-mark path').length,
    diamonds: svg.querySelectorAll('.mark-symbol.role-mark path').length,
    knees: Array.from(svg.querySelectorAll('.mark-text.role-mark text')).map(t => t.textContent),
    title: Array.from(svg.querySelectorAll('.role-title-subtitle text')).map(t => t.textContent),
  };
})()"""


def loaded_point(traffic: str, delay: int | None, gb_s: float, ns: float) -> dict:
    samples = [ns * 0.995, ns, ns * 1.005]
    return {"schema_version": 1, "experiment": "loaded_latency", "kernel": "loaded_latency",
            "metric": "loaded_latency", "unit": "ns",
            "params": {"traffic": traffic, "read_lines": 1, "write_lines": 0, "store": "regular", "delay": delay,
                       "load_threads": 0 if traffic == "idle" else 3, "working_set_bytes": 1 << 28},
            "samples": samples, "context": {"bandwidth_gb_s": gb_s},
            "summary": {"min": samples[0], "median": ns, "mean": ns, "ci95_low": samples[0], "ci95_high": samples[2],
                        "count": 3}}


def test_the_loaded_latency_knee_is_an_interval_and_a_flat_curve_has_none(bundles, cli, browser, tmp_path):
    """read traffic bends at 20 GB/s (a hockey stick from 95 ns idle to 240 ns); 1:1 stays within 3% of idle: the
    chart marks read's knee as a band and a diamond and names 1:1 as having none, and so does the summary."""
    ladder = [(20000, 1.0), (5000, 4.0), (1000, 10.0), (500, 16.0), (200, 20.0), (100, 24.0), (50, 27.0), (0, 28.0)]
    points = [loaded_point("idle", None, 0.0, 95.0)]
    points += [loaded_point("read", delay, gb_s, 95.0 + max(gb_s - 20.0, 0.0) * 18.0) for delay, gb_s in ladder]
    points += [loaded_point("1:1", delay, gb_s * 0.6, 95.0 * (1.0 + 0.004 * index))
               for index, (delay, gb_s) in enumerate(ladder)]
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "loaded_latency", "status": "ok", "file": "results/loaded_latency.jsonl",
                                    "error": None, "wall_s": 1.0})
    bundles.write(manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                     "results/loaded_latency.jsonl": points})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    loaded = browser.open(out / "node1.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    chart = browser.evaluate(LOADED_PROBE)
    assert chart["bands"] == 1 and chart["knees"] == ["knee"]
    assert chart["diamonds"] >= 1 + len(points) - 1  # every point and the one knee
    subtitle = " ".join(chart["title"])
    assert "band: the interval each knee lies in" in subtitle and "no knee on 1:1" in subtitle
    figure = browser.evaluate("document.getElementById('summary').innerText")
    # Kneedle's point is the corner (20 GB/s), between the next bandwidths below and above it
    assert "between 16 GB/s and 24 GB/s (Kneedle 20 GB/s at 95 ns; read traffic, idle 95 ns at no load)" in figure


def c2c_point(cpu_a: int, cpu_b: int, ns: float) -> dict:
    samples = [ns * 0.99, ns, ns * 1.01]
    return {"schema_version": 1, "experiment": "c2c", "kernel": "c2c", "metric": "latency", "unit": "ns",
            "params": {"cpu_a": cpu_a, "cpu_b": cpu_b, "smt_siblings": False, "same_core": False, "same_package": True,
                       "numa_node_a": 0, "numa_node_b": 0},
            "samples": samples, "summary": {"min": samples[0], "median": ns, "mean": ns, "ci95_low": samples[0],
                                            "ci95_high": samples[2], "count": 3}, "context": {}}


def rgb(colour: str) -> tuple[int, ...]:
    """'#21918c' or 'rgb(33, 145, 140)' as (33, 145, 140)."""
    if colour.startswith("#"):
        return tuple(int(colour[index:index + 2], 16) for index in (1, 3, 5))
    return tuple(int(part) for part in re.findall(r"\d+", colour)[:3])


def test_core_to_core_cells_that_print_alike_share_a_colour(bundles, cli, browser, tmp_path):
    """Two CPUs whose one-way latencies are 165.6 and 166.4 ns (both print '166'): one colour, not the two ends of
    the scale; a pair 3x slower is coloured far from them."""
    manifest = bundles.manifest()
    manifest["experiments"].append({"name": "c2c", "status": "ok", "file": "results/c2c.jsonl", "error": None,
                                    "wall_s": 1.0})
    pairs = [(0, 1, 165.6), (1, 0, 166.4)]
    bundles.write(manifest, results={"results/latency_sweep.jsonl": bundles.latency_points(),
                                     "results/c2c.jsonl": [c2c_point(*pair) for pair in pairs]})
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    loaded = browser.open(out / "node1.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    fills = browser.evaluate("Array.from(document.querySelectorAll('#c2c-chart .mark-rect.role-mark path'))"
                             ".map(p => p.getAttribute('fill'))")
    labels = browser.evaluate("Array.from(document.querySelectorAll('#c2c-chart .mark-text.role-mark text'))"
                              ".map(t => t.textContent)")
    assert len(fills) == 2 and labels == ["166", "166"]
    first, second = rgb(fills[0]), rgb(fills[1])
    assert max(abs(a - b) for a, b in zip(first, second)) <= 24, fills  # viridis' two ends differ by over 200
