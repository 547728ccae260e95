"""The Intel MLC sections of a host page in headless Chromium: the loaded-latency curve and the
bandwidth bars are drawn from real MLC outputs (loaded with `fleetscope import`), without console messages."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "mlc_samples"
PROBE = """(() => {
  const count = (id, selector) => {
    const svg = document.querySelector('#' + id + ' svg');
    return svg ? svg.querySelectorAll(selector).length : null;
  };
  return {
    lines: count('mlc-chart', '.mark-line.role-mark path'),
    symbols: count('mlc-chart', '.mark-symbol.role-mark path'),
    bars: count('mlc-bandwidth-chart', '.mark-rect.role-mark path'),
  };
})()"""


def test_mlc_charts_render_without_console_messages(cli, browser, tmp_path):
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    files = [SAMPLES / name for name in ("csit_clx_loaded_latency.txt", "csit_clx_idle_latency.txt",
                                         "csit_clx_peak_injection_bandwidth.txt", "csit_clx_max_bandwidth.txt",
                                         "csit_clx_c2c_latency.txt")]
    imported = cli("import", "--db", db, "--results", tmp_path / "results", "--host", "lab1", "mlc", *files)
    assert imported.returncode == 0, imported.stderr
    assert cli("report", "--db", db, "--out", out).returncode == 0
    (page,) = out.glob("lab1*.html")

    loaded = browser.open(page)
    assert loaded.console == [] and loaded.charts_state == "drawn"
    drawn = browser.evaluate(PROBE)
    assert drawn["lines"] == 1 and drawn["symbols"] == 19  # one ladder, one point per injected delay
    assert drawn["bars"] == 10  # five read-write mixes, peak injection and max bandwidth
