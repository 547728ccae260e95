"""Every page of a default run (tests/fixtures/default_run: a real `make run` bundle) in headless Chromium,
as a new user first sees it: no console message of any level (Vega's warnings included), every chart
container drew marks and no NaN, nothing fetched from the network, and the summary in the first screen
(1400 × 900)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

DEFAULT_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "default_run" / "results"
SCREEN = {"width": 1400, "height": 900}
PAGE_LIMIT_BYTES = 400 * 1024


@pytest.fixture(scope="module")
def default_report(bundle_tools, tmp_path_factory):
    """The default run loaded into a fresh warehouse and reported, as `make run` does."""
    _, run_cli = bundle_tools
    root = tmp_path_factory.mktemp("default-run")
    shutil.copytree(DEFAULT_RUN, root / "results")
    db, out = root / "fleet.duckdb", root / "reports"
    ingested = run_cli("ingest", root / "results", "--db", db)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    reported = run_cli("report", "--db", db, "--out", out)
    assert reported.returncode == 0, reported.stdout + reported.stderr
    return out


def test_every_page_loads_without_a_console_message_and_every_chart_draws(default_report, browser):
    pages = sorted(default_report.rglob("*.html"))
    assert [page.name for page in pages] == ["index.html", "localhost.html"]
    for page in pages:
        loaded = browser.open(page)
        assert loaded.console == [], (page.name, loaded.console)
        assert [url for url in loaded.requests if not url.startswith("file:")] == [], page.name
        assert browser.overprinted_labels() == [], page.name  # no axis tick or rule label runs into another
        if page.name == "index.html":
            assert loaded.charts_state == "drawn" and len(loaded.charts) == 4  # the fleet page's curves of every host
            for chart in loaded.charts:
                assert chart["svg"] and chart["marks"] > 0 and not chart["nan"], chart
            assert browser.evaluate("document.getElementById('fleet-count').textContent") == "1 host"
            assert browser.evaluate("document.getElementById('fleet-counts').textContent").startswith("1 lab host in")
            continue
        assert len(page.read_bytes()) <= PAGE_LIMIT_BYTES
        assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scroll
        assert loaded.charts_state == "drawn"
        assert len(loaded.charts) >= 15  # every experiment the default run measures has its chart
        for chart in loaded.charts:
            assert chart["svg"] and chart["marks"] > 0 and not chart["nan"], chart


def test_the_summary_is_the_first_screen(default_report, browser, tmp_path):
    page = default_report / "localhost.html"
    browser.open(page)
    assert browser.evaluate("[window.innerWidth, window.innerHeight]") == [SCREEN["width"], SCREEN["height"]]
    summary = browser.box("#summary")
    assert summary is not None and summary["top"] >= 0
    assert summary["bottom"] <= SCREEN["height"] and summary["right"] <= SCREEN["width"]
    # what the first screen says: the CPU, the hierarchy with its levels, the headline figures, the flags
    text = browser.evaluate("document.getElementById('summary').innerText")
    assert "Intel(R) Xeon(R) Processor" in text and "GenuineIntel family 6 (0x6), model 167 (0xa7)" in text
    # each size a bracket of two measured sizes with its best estimate under it (the default run's coarse curve)
    assert re.search(r"L1\s+\d+–\d+ KiB\s+sysfs 48 KiB\s+48 KiB\s+[\d.]+ ns", text)
    assert re.search(r"DRAM\s+—\s+—\s+[\d,.]+ ns", text)
    for label in ("TLB", "Memory-level parallelism", "Read bandwidth", "Loaded-latency knee", "Storage p99"):
        assert label in text
    assert re.search(r"\d+ flagged, \d+ clear, \d+ not run", text)
    # the run's loaded latency never rises (a 2-vCPU guest, one load thread): no knee, and how far it rose
    assert re.search(r"Loaded-latency knee\s+none: latency at saturation is 1\.\d\d × idle \([\d.]+ ns vs [\d.]+ ns at "
                     r"no load, peak [\d.]+ GB/s, read traffic\); a knee needs 1\.3 ×", text), text
    # one line per flagged rule, however many points it flags, so the flags never push the summary off screen
    rules = browser.evaluate("Array.from(document.querySelectorAll('#summary-flags li > a:first-child'))"
                             ".map(a => a.textContent)")
    assert rules and len(rules) == len(set(rules)), rules
    shot = browser.screenshot(tmp_path / "first-screen.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    # the table of contents reaches every family and the environment from the first screen
    toc = browser.evaluate("Array.from(document.querySelectorAll('nav.toc h2')).map(h => h.textContent)")
    assert toc[1:] == ["Latency", "Bandwidth", "CPU, OS and I/O", "Storage", "Intel MLC", "Inferred",
                       "Checks and environment"]
    assert browser.evaluate("Array.from(document.querySelectorAll('nav.toc a')).filter(a => "
                            "!document.getElementById(a.hash.slice(1)) && !a.href.endsWith('index.html')).length") == 0


def test_raw_tables_are_collapsed_under_their_chart(default_report, browser):
    browser.open(default_report / "localhost.html")
    tables = browser.evaluate("""Array.from(document.querySelectorAll('table[id$="-table"]')).map(table => ({
        id: table.id, collapsed: !!table.closest('details') && !table.closest('details').open,
        visible: table.checkVisibility()}))""")
    assert tables and all(table["collapsed"] and not table["visible"] for table in tables), tables
    bandwidth = next(table for table in tables if table["id"] == "bandwidth-table")
    assert bandwidth["collapsed"]


def test_the_tlb_chart_draws_each_chain_as_its_subtitle_says(default_report, browser):
    """Solid is the one-line-per-page chain and dashed the control chain, as the subtitle says; the legend draws
    the two differently."""
    browser.open(default_report / "localhost.html")
    subtitle = " ".join(browser.evaluate("Array.from(document.querySelectorAll('#tlb-chart .role-title-subtitle text'))"
                                         ".map(t => t.textContent)"))
    assert subtitle.startswith("solid: one line per page; dashed: control chain")
    legend = browser.evaluate("""Array.from(document.querySelectorAll('#tlb-chart .role-legend')).flatMap(legend =>
      Array.from(legend.querySelectorAll('.role-legend-symbol path')).map((symbol, index) => ({
        label: legend.querySelectorAll('.role-legend-label text')[index].textContent,
        dash: symbol.getAttribute('stroke-dasharray'), stroke: symbol.getAttribute('stroke')})))""")
    chains = {entry["label"]: entry for entry in legend if entry["label"] in ("one line per page", "control chain")}
    assert chains["one line per page"]["dash"] in (None, "1,0") and chains["control chain"]["dash"] == "5,3", legend
    assert all(entry["stroke"] for entry in chains.values())  # drawn, not an empty symbol
    # the page's 4 KiB curves: the one-line-per-page chain (above the control from the L1 DTLB's reach on) is solid
    lines = browser.evaluate("""Array.from(document.querySelectorAll('#tlb-chart .mark-line.role-mark path')).map(p => ({
      dash: p.getAttribute('stroke-dasharray'), top: p.getBBox().y}))""")
    solid = [line for line in lines if line["dash"] in (None, "1,0")]
    dashed = [line for line in lines if line["dash"] == "5,3"]
    assert solid and dashed and min(line["top"] for line in solid) < min(line["top"] for line in dashed)
