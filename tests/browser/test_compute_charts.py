"""The compute family's pages in headless Chromium, from real runs (tests/compute_bundles.py): the host page's clock
curve, FLOPS table and roofline draw their marks without a console message; the fleet page's table has the clock
and FLOP/s columns; the comparison of two hosts overlays their rooflines."""

from __future__ import annotations

import pytest

import compute_bundles

pytestmark = pytest.mark.browser

PROBE = """(() => {
  const svg = id => document.querySelector('#' + id + ' svg');
  const count = (id, selector) => svg(id) ? svg(id).querySelectorAll(selector).length : null;
  return {
    clock_lines: count('core-clock-chart', '.mark-line.role-mark path'),
    roofline_lines: count('peak-flops-chart', '.mark-line.role-mark path'),
    roofline_points: count('peak-flops-chart', '.mark-symbol.role-mark path'),
    flops_rows: document.querySelectorAll('#peak-flops-table tbody tr').length,
    ramp_rows: document.querySelectorAll('#core-clock-extra-table tbody tr').length,
    headlines: [...document.querySelectorAll('#summary-figures dt')].map(term => term.textContent)
                 .filter(text => /Core clock|Peak FP64/.test(text)).length,
  };
})()"""


@pytest.fixture(scope="module")
def reports(bundle_tools, tmp_path_factory):
    _, run_cli = bundle_tools
    root = tmp_path_factory.mktemp("compute-pages")
    compute_bundles.write_bundle(root / "results", host="zen-a")
    compute_bundles.write_bundle(root / "results", host="zen-b", run_id="20261127T090000Z-b00001",
                                 all_cores_clock=0.9, watts=120.0)
    db, out = root / "fleet.duckdb", root / "reports"
    for arguments in (("ingest", root / "results", "--db", db), ("report", "--db", db, "--out", out),
                      ("compare", "zen-a", "zen-b", "--db", db, "--out", out / "compare.html")):
        proc = run_cli(*arguments)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


@pytest.mark.parametrize("host", ["zen-a", "zen-b"])
def test_the_host_page_draws_the_clock_curve_the_flops_table_and_the_roofline(reports, browser, host):
    loaded = browser.open(reports / f"{host}.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    for chart in loaded.charts:
        assert chart["marks"] > 0 and not chart["nan"], chart
    found = browser.evaluate(PROBE)
    # four classes; the roofline's ceilings (equal ones merged) and SAXPY's eight strides
    assert found["clock_lines"] == 4 and found["roofline_lines"] >= 6 and found["roofline_points"] == 8
    assert found["flops_rows"] == 16 and found["ramp_rows"] == 1 and found["headlines"] == 2
    assert browser.overprinted_labels() == []  # the clock's core counts, the roofline's fractional intensities


def test_the_fleet_table_has_the_clock_and_flops_columns(reports, browser):
    loaded = browser.open(reports / "index.html")
    assert loaded.console == []
    headers = browser.evaluate("[...document.querySelectorAll('table th')].map(th => th.textContent.trim())")
    for header in ("clock 1 core", "clock all cores", "FP64 1 core", "FP64 all cores", "FP64 FLOP/cycle"):
        assert any(text.startswith(header) for text in headers), (header, headers)


def test_compare_overlays_the_two_hosts_rooflines(reports, browser):
    loaded = browser.open(reports / "compare.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    rooflines = browser.evaluate("""[...document.querySelectorAll('.chart')].filter(chart =>
        /Roofline/.test(chart.textContent)).map(chart => chart.querySelectorAll('.mark-line.role-mark path').length)""")
    assert rooflines == [2, 2]  # one core and all cores, a line per host each
    assert browser.overprinted_labels() == []
