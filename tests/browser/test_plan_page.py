"""The host page's *Plan and price* in headless Chromium: no console message, the table laid out on the
page with the overshooting experiment marked, and the contents linking to it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PLAN_PROBE = """(() => {
  const table = document.querySelector('#plan-table');
  if (!table) return null;
  const box = table.getBoundingClientRect();
  return {
    rows: Array.from(table.querySelectorAll('tbody tr')).map(row => ({
      cells: Array.from(row.cells).map(cell => cell.textContent.trim()),
      marked: row.classList.contains('mismatch'),
    })),
    width: box.width,
    sentence: document.querySelector('#plan-sentence').textContent.trim(),
    linked: !!document.querySelector('nav.toc a[href="#plan"]'),
    price: document.querySelector('#summary-plan').textContent.trim(),
  };
})()"""


def test_the_plan_and_price_table_shows_in_the_browser(bundles, cli, browser, tmp_path):
    manifest = bundles.manifest()
    manifest["experiments"][0]["wall_s"] = 13.0
    manifest["plan"] = {
        "profile": "quick", "budget_s": 120, "bound_s": 40.0, "points": 42, "within_budget": True,
        "experiments": [
            {"name": "latency_sweep", "points": 34, "processes": 2, "bound_s": 10.0, "allowance_s": 10.0,
             "target_rel": None, "cap_s": None, "kinds": 1, "skip": None, "notes": [],
             "cuts": ["largest working set cut from 128 MiB to 64 MiB (budget)"]},
            {"name": "fio", "points": 8, "processes": 8, "bound_s": 30.0, "allowance_s": None, "target_rel": None,
             "cap_s": None, "skip": None, "notes": [], "cuts": []}]}
    bundles.write(manifest=manifest)
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0

    loaded = browser.open(out / "node1.html")
    assert loaded.console == []
    assert loaded.charts_state == "drawn"
    plan = browser.evaluate(PLAN_PROBE)
    assert plan is not None and plan["linked"] and plan["width"] > 400
    assert plan["sentence"].startswith("Planned before measuring: 2 experiments, 42 points, at most 40 s")
    assert plan["price"] == "at most 40 s (budget 120 s), took 13 s; 1 over"  # the Run card, first screen
    by_name = {row["cells"][0]: row for row in plan["rows"]}
    assert by_name["latency_sweep"]["marked"] and "130% OVER" in by_name["latency_sweep"]["cells"]
    assert by_name["latency_sweep"]["cells"][-1] == "largest working set cut from 128 MiB to 64 MiB (budget)"
    assert not by_name["fio"]["marked"] and by_name["fio"]["cells"][1] == "not recorded"
    browser.evaluate("document.querySelector('#plan').scrollIntoView()")
    shot = tmp_path / "plan.png"
    shot.write_bytes(__import__("base64").b64decode(
        browser.devtools.call("Page.captureScreenshot", format="png")["data"]))
    assert shot.stat().st_size > 10_000
