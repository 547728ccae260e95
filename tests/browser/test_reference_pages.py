"""Reference hosts on the pages, in headless Chromium: a lab machine (the default run) beside three published
curves of the shipped library (an absolute ramlat curve, tinymembench's relative one, the Cortex-A15 TLB curve).
Each reference host's page and the fleet page load with no console message of any level, every chart draws
marks and no NaN, nothing is fetched from the network, and the reference hosts are marked as such (badge,
source link, how the curve was measured), the lab host is not; so does a comparison with one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

DEFAULT_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "default_run" / "results"
# each with how its source measured it, as the page must say
REFERENCES = {"ref-epyc-74f3-zen3": "line-per-page, 4 KiB pages", "ref-graviton2-neoverse-n1": "random-lines, 2 MiB pages",
              "ref-tegra-k1-cortex-a15": "line-per-page, 4 KiB pages"}
BADGE = "document.querySelector('h1 .status-reference') !== null"


@pytest.fixture(scope="module")
def reports(bundle_tools, tmp_path_factory):
    _, run_cli = bundle_tools
    root = tmp_path_factory.mktemp("reference-pages")
    shutil.copytree(DEFAULT_RUN, root / "results")
    db, out = root / "fleet.duckdb", root / "reports"
    for argv in (("ingest", root / "results"), ("reference", "load", *REFERENCES, "--results", root / "results"),
                 ("report", "--out", out), ("compare", "localhost", "ref-epyc-74f3-zen3", "--out", out / "compare.html")):
        proc = run_cli(*argv, "--db", db)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def drawn_cleanly(loaded) -> None:
    assert loaded.console == [], loaded.console
    assert [url for url in loaded.requests if not url.startswith("file:")] == []
    assert loaded.charts_state == "drawn"
    assert loaded.charts
    for chart in loaded.charts:
        assert chart["svg"] and chart["marks"] > 0 and not chart["nan"], chart


@pytest.mark.parametrize("host", REFERENCES)
def test_a_reference_hosts_page_draws_and_says_what_it_is(reports, browser, host):
    loaded = browser.open(reports / f"{host}.html")
    drawn_cleanly(loaded)
    assert browser.evaluate(BADGE)
    note = browser.evaluate("document.getElementById('reference-note').textContent")
    assert "A reference host" in note and REFERENCES[host] in " ".join(note.split())
    link = browser.evaluate("document.querySelector('#reference-source a').href")
    assert link.startswith("https://github.com/")
    if host == "ref-graviton2-neoverse-n1":
        assert "ns over L1" in note
        # its levels are the extra time over L1, never a load-to-use latency: the table and the chart say so
        headers = browser.evaluate("Array.from(document.querySelectorAll('#summary-levels th')).map(th => th.textContent)")
        assert headers[3] == "over L1" and "+29.3 ns" in browser.evaluate(
            "document.getElementById('summary-levels').textContent")
        axis = browser.evaluate("Array.from(document.querySelectorAll('#latency-chart .role-axis-title text'))"
                                ".map(t => t.textContent)")
        assert "extra time over an L1 hit (ns, log scale)" in axis, axis
    if host != "ref-tegra-k1-cortex-a15":  # a cache curve: the latency chart (a TLB curve has the inferred table)
        assert any("latency" in chart["id"] for chart in loaded.charts), [chart["id"] for chart in loaded.charts]
    browser.screenshot(reports.parent / f"{host}.png")


def test_the_fleet_page_sets_reference_hosts_apart_and_scores_none(reports, browser):
    loaded = browser.open(reports / "index.html")
    drawn_cleanly(loaded)
    assert browser.overprinted_labels() == []
    # the lab's table and groups hold the lab host only; the reference hosts have a section of their own
    hosts = "Array.from(document.querySelectorAll('{} tbody tr')).map(r => r.cells[0].querySelector('a').textContent)"
    assert browser.evaluate(hosts.format("#hosts")) == ["localhost"]
    assert sorted(browser.evaluate(hosts.format("#references-table"))) == sorted(REFERENCES)
    groups = browser.evaluate("Array.from(document.querySelectorAll('#groups tbody tr')).map(r => "
                              "r.cells[0].textContent + ' ' + r.cells[1].textContent)")
    assert groups == ["Rocket Lake 1", "(groups not recorded) 1"], groups
    # each reference with its tool and method; the relative curve is named as kept off the absolute charts
    tools = browser.evaluate("Array.from(document.querySelectorAll('#references-table tbody tr')).map(r => "
                             "r.cells[2].textContent + ' | ' + r.cells[3].textContent)")
    assert "tinymembench, single random read (sbc-bench) | a dependent chase over random lines, 2 MiB pages, " \
           "ns over L1 (a relative curve)" in tools, tools
    assert "ref-graviton2-neoverse-n1" in browser.evaluate("document.querySelector('#reference-hosts + p').textContent")
    data = browser.evaluate("JSON.parse(document.getElementById('fleet-data').textContent)")
    drawn = {data["hosts"][curve[0]]["name"] for curve in data["curves"]["latency"]}
    assert drawn == {"localhost", "ref-epyc-74f3-zen3"}  # the relative curve is on no absolute axis; the TLB curve
    legend = browser.evaluate("Array.from(document.querySelectorAll('#fleet-latency-chart .role-legend-label text'))"
                              ".map(t => t.textContent)")
    assert {"lab host", "reference host"} <= set(legend)
    assert browser.evaluate("document.getElementById('fleet-count').textContent") == "4 hosts"
    browser.evaluate("(() => { const filter = document.getElementById('fleet-filter'); filter.value = 'tegra'; "
                     "filter.dispatchEvent(new Event('input')); })()")
    assert browser.evaluate("document.getElementById('fleet-count').textContent") == "1 of 4 hosts"
    assert browser.evaluate("document.getElementById('outliers-references').textContent").count("ref-") == 3
    lab = reports / "localhost.html"
    drawn_cleanly(browser.open(lab))
    assert not browser.evaluate(BADGE) and browser.evaluate("document.getElementById('reference-note') === null")


def test_a_comparison_with_a_reference_host_marks_it_and_draws(reports, browser):
    loaded = browser.open(reports / "compare.html")
    drawn_cleanly(loaded)
    marked = browser.evaluate("Array.from(document.querySelectorAll('#operands tbody tr')).map(r => "
                              "r.querySelector('.status-reference') !== null)")
    assert marked == [False, True]
    assert browser.overprinted_labels() == []
    assert browser.evaluate("document.getElementById('no-test').textContent") == (
        "No test ran: a reference host's published curve gives one value per size, not the samples a test needs.")
    assert browser.evaluate("document.getElementById('moved-none')") is None
    untested = browser.evaluate("Array.from(document.querySelectorAll('.untested-list li')).map(li => li.textContent)")
    assert any(line.startswith("ref-epyc-74f3-zen3: DRAM latency") for line in untested), untested
    source = browser.evaluate("Array.from(document.querySelectorAll('#reference-sources tbody tr')).map(r => "
                              "Array.from(r.cells).map(c => c.textContent.trim()))")
    assert [row[:5] for row in source] == [["ref-epyc-74f3-zen3", "AMD EPYC 74F3 24-Core Processor",
                                            "ramlat (wtarreau/ramspeed, 1xPTR)",
                                            "a dependent chase with one line per page (TLB steps inside the curve), "
                                            "4 KiB pages, ns per load", "4 GHz"]]
    assert source[0][5] == "github.com/…/data/results.txt (line 675, ramlat 1xPTR)"  # the link, short
    assert browser.evaluate("document.querySelector('#reference-sources td.source a').href").startswith(
        "https://github.com/wtarreau/ramspeed/blob/b88c4f7e81675b40359ca55a913a03620cc5c2a0/")
    browser.screenshot(reports.parent / "compare.png")
