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
    template = manifest["experiments"][0]
    manifest["experiments"] += [  # the workloads, priced on top of the budget, and MLC's skip beside its plan
        {**template, "name": "workloads", "status": "failed", "file": None, "wall_s": 20.0, "raw": [],
         "error": "reference_alloc_walk: timed out after 20 s"},
        {**template, "name": "mlc", "status": "skipped", "file": None, "wall_s": 0.0, "raw": []}]
    manifest["plan"] = {
        "profile": "quick", "budget_s": 120, "bound_s": 65.8, "points": 43, "within_budget": True,
        "experiments": [
            {"name": "latency_sweep", "points": 34, "processes": 2, "bound_s": 10.0, "allowance_s": 10.0,
             "target_rel": None, "cap_s": None, "kinds": 1, "skip": None, "notes": [],
             "cuts": ["largest working set cut from 128 MiB to 64 MiB (budget)"]},
            {"name": "fio", "points": 8, "processes": 8, "bound_s": 30.0, "allowance_s": None, "target_rel": None,
             "cap_s": None, "skip": None, "notes": [], "cuts": []},
            {"name": "mlc", "points": 0, "processes": 0, "bound_s": 0.0, "allowance_s": None, "target_rel": None,
             "cap_s": None, "skip": "Intel MLC was not supplied (mlc_path)", "notes": [], "cuts": []},
            {"name": "workloads", "points": 1, "processes": 2, "bound_s": 25.8, "allowance_s": None,
             "target_rel": None, "cap_s": None, "skip": None, "notes": [], "cuts": []}]}
    bundles.write(manifest=manifest)
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("ingest", bundles.results_dir, "--db", db).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0

    loaded = browser.open(out / "node1.html")
    assert loaded.console == []
    assert loaded.charts_state == "drawn"
    plan = browser.evaluate(PLAN_PROBE)
    assert plan is not None and plan["linked"] and plan["width"] > 400
    assert plan["sentence"].startswith("Planned before measuring: 3 experiments, 43 points, at most 65.8 s: "
                                       "40 s within the 120 s budget, workloads 25.8 s on top of it")
    assert plan["price"] == "at most 65.8 s (40 s of a 120 s budget, workloads 25.8 s on top), took 33 s; 1 over"  # the Run card, first screen
    by_name = {row["cells"][0]: row for row in plan["rows"]}
    assert by_name["latency_sweep"]["marked"] and "130% OVER" in by_name["latency_sweep"]["cells"]
    assert by_name["latency_sweep"]["cells"][-1] == "largest working set cut from 128 MiB to 64 MiB (budget)"
    assert not by_name["fio"]["marked"] and by_name["fio"]["cells"][1] == "not recorded"
    assert not by_name["workloads"]["marked"] and by_name["workloads"]["cells"][4:6] == ["25.8 s", "20 s"]
    assert any("Intel MLC was not supplied" in cell for cell in by_name["mlc"]["cells"])
    browser.evaluate("document.querySelector('#plan').scrollIntoView()")
    shot = tmp_path / "plan.png"
    shot.write_bytes(__import__("base64").b64decode(
        browser.devtools.call("Page.captureScreenshot", format="png")["data"]))
    assert shot.stat().st_size > 10_000
