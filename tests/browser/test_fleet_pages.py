"""The fleet page and a comparison page of the synthetic fleet (tests/fleet_bundles.py: three CPU groups, one
host with slow DRAM) in headless Chromium: no console message of any level, every chart drew marks and no
NaN, nothing fetched from the network, the groups shown by microarchitecture and by inventory group (tables,
chart legends), the slow host the only outlier, and the table sorting and filtering the way a person clicks
and types."""

from __future__ import annotations

import json

import pytest
from fleet_bundles import GROUPS

pytestmark = pytest.mark.browser

UARCHS = sorted(group.microarchitecture for group in GROUPS)
LEGEND_PROBE = """Array.from(document.querySelectorAll('#{id} .role-legend-label text')).map(t => t.textContent)"""
VISIBLE_HOSTS = "Array.from(document.querySelectorAll('#hosts tbody tr')).filter(r => !r.hidden).map(r => r.cells[0].textContent.trim())"


@pytest.fixture(scope="module")
def reports(synthetic_fleet, bundle_tools, tmp_path_factory):
    _, db = synthetic_fleet
    _, run_cli = bundle_tools
    out = tmp_path_factory.mktemp("fleet-pages") / "reports"
    reported = run_cli("report", "--db", db, "--out", out)
    assert reported.returncode == 0, reported.stdout + reported.stderr
    compared = run_cli("compare", "--db", db, "group:raptor_lake", "uarch:zen3", "uarch:neoverse-n1",
                       "--out", out / "compare.html")
    assert compared.returncode == 0, compared.stdout + compared.stderr
    return out


def drawn_cleanly(loaded) -> None:
    assert loaded.console == [], loaded.console
    assert [url for url in loaded.requests if not url.startswith("file:")] == []
    assert loaded.charts_state == "drawn"
    for chart in loaded.charts:
        assert chart["svg"] and chart["marks"] > 0 and not chart["nan"], chart


def test_the_fleet_page_shows_the_groups_and_the_one_outlier(reports, browser):
    loaded = browser.open(reports / "index.html")
    drawn_cleanly(loaded)
    assert sorted(chart["id"] for chart in loaded.charts) == ["fleet-bandwidth-chart", "fleet-latency-chart",
                                                              "fleet-loaded_latency-chart", "fleet-tlb-chart"]
    assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    column = "Array.from(document.querySelectorAll('#groups-{} tbody tr td:first-child')).map(td => td.textContent.trim())"
    assert sorted(browser.evaluate(column.format("microarchitecture-table"))) == UARCHS
    assert sorted(browser.evaluate(column.format("inventory-table"))) == ["lab", "neoverse", "raptor_lake", "zen3"]
    outliers = browser.evaluate("Array.from(document.querySelectorAll('#outliers-table tbody tr')).map(r => "
                                "[r.cells[0].textContent.trim(), r.cells[2].textContent.trim()])")
    assert {host for host, _ in outliers} == {"rpl-03"}
    assert {figure for _, figure in outliers} == {"DRAM latency", "read 1 thread", "read all threads"}
    assert sorted(browser.evaluate(LEGEND_PROBE.format(id="fleet-latency-chart"))) == UARCHS
    # rpl-03's latest run against its earlier one: DRAM latency up by about 60%
    cells = browser.evaluate("(() => { const r = Array.from(document.querySelectorAll('#hosts tbody tr')).find(r => "
                             "r.cells[0].textContent.trim() == 'rpl-03'); return Array.from(r.cells).map(c => "
                             "c.textContent.trim()); })()")
    assert any("+6" in text and "DRAM latency" in text for text in cells), cells
    # ... which `fleetscope check`'s rule calls a change: the one host badged, its figures in the badge's title
    badges = browser.evaluate("Array.from(document.querySelectorAll('#hosts .status-changed')).map(b => "
                              "[b.closest('tr').cells[0].querySelector('a').textContent, b.title])")
    assert [host for host, _ in badges] == ["rpl-03"]
    assert "DRAM latency" in badges[0][1] and "Mann-Whitney p = " in badges[0][1]
    assert browser.evaluate("document.querySelector('#fleet-changed a').textContent") == "rpl-03"


def type_filter(browser, text: str) -> None:
    browser.evaluate(f"(() => {{ const f = document.getElementById('fleet-filter'); f.value = {json.dumps(text)};"
                     " f.dispatchEvent(new Event('input')); })()")


def test_the_table_sorts_and_filters_and_the_charts_follow(reports, browser):
    browser.open(reports / "index.html")
    heading = ("Array.from(document.querySelectorAll('#hosts thead th')).find(th => "
               "th.textContent.startsWith('DRAM latency'))")
    browser.evaluate(f"{heading}.click()")
    assert browser.evaluate(VISIBLE_HOSTS)[0].startswith("rpl-")  # Raptor Lake's DRAM is the fastest
    browser.evaluate(f"{heading}.click()")  # the second click sorts descending
    assert browser.evaluate(f"{heading}.getAttribute('aria-sort')") == "descending"
    assert browser.evaluate(VISIBLE_HOSTS)[:6] == ["n1-05", "n1-03", "n1-01", "rpl-03", "n1-04", "n1-02"]
    type_filter(browser, "raptor")
    assert browser.evaluate(VISIBLE_HOSTS)[0] == "rpl-03" and len(browser.evaluate(VISIBLE_HOSTS)) == 6

    type_filter(browser, "zen3")
    assert sorted(browser.evaluate(VISIBLE_HOSTS)) == [f"zen3-0{index}" for index in range(1, 7)]
    assert browser.evaluate("document.getElementById('fleet-count').textContent") == "6 of 18 hosts"
    wait_drawn = "new Promise(r => { const t = setInterval(() => { if (document.documentElement.dataset.charts) { clearInterval(t); r(document.documentElement.dataset.charts); } }, 50); })"
    assert browser.devtools.call("Runtime.evaluate", expression=wait_drawn, awaitPromise=True,
                                 returnByValue=True)["result"]["value"] == "drawn"
    assert browser.evaluate(LEGEND_PROBE.format(id="fleet-latency-chart")) == ["Zen 3 (Vermeer)"]

    browser.evaluate("(() => { const f = document.getElementById('fleet-filter'); f.value = '';"
                     " f.dispatchEvent(new Event('input')); const c = document.getElementById('fleet-colour');"
                     " c.value = 'inventory'; c.dispatchEvent(new Event('change')); })()")
    assert browser.devtools.call("Runtime.evaluate", expression=wait_drawn, awaitPromise=True,
                                 returnByValue=True)["result"]["value"] == "drawn"
    assert sorted(browser.evaluate(LEGEND_PROBE.format(id="fleet-bandwidth-chart"))) == ["neoverse", "raptor_lake",
                                                                                         "zen3"]
    title = browser.evaluate("document.querySelector('#fleet-bandwidth-chart .role-legend-title text').textContent")
    assert title == "inventory group"
    assert [message for message in browser.devtools.events
            if message.get("method") in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown")] == []


def test_the_comparison_page_overlays_every_family_with_one_line_per_operand(reports, browser):
    loaded = browser.open(reports / "compare.html")
    drawn_cleanly(loaded)
    ids = {chart["id"] for chart in loaded.charts}
    assert {"compare-latency-chart", "compare-tlb-chart", "compare-mlp-chart", "compare-bandwidth-chart",
            "compare-threads-chart", "compare-loaded_latency-chart", "compare-aio-chart",
            "compare-storage-chart"} == ids
    operands = ["group:raptor_lake", "uarch:zen3", "uarch:neoverse-n1"]
    assert browser.evaluate(LEGEND_PROBE.format(id="compare-latency-chart")) == operands
    rows = browser.evaluate("Array.from(document.querySelectorAll('#deltas tbody tr')).map(r => "
                            "Array.from(r.cells).map(c => c.textContent.trim()))")
    dram = next(row for row in rows if row[0] == "DRAM latency")
    assert dram[4] == "+25.0%" and dram[5].endswith("significant")
    assert "Figures side by side" in browser.evaluate("document.body.innerText")
    assert json.loads(browser.evaluate("JSON.stringify(Array.from(document.querySelectorAll('#operands tbody tr'))"
                                       ".map(r => r.cells[2].textContent.trim()))")) == ["6", "6", "6"]
