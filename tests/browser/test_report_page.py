"""A host page in headless Chromium: no console message of any level, no network request, and the latency
curve drawn with its sysfs rules and the inferred levels marked."""

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
