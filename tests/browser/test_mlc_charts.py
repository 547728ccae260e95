"""The Intel MLC sections of a host page in headless Chromium: the loaded-latency curve and the
bandwidth bars are drawn from real MLC outputs (loaded with `fleetscope import`), without errors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from test_report_page import CHROMIUM, DevTools, _page_websocket_url, chromium  # noqa: F401 (chromium: fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)"),
]

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


def test_mlc_charts_render_without_errors(cli, chromium, tmp_path):  # noqa: F811 (the fixture)
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    files = [SAMPLES / name for name in ("csit_clx_loaded_latency.txt", "csit_clx_idle_latency.txt",
                                         "csit_clx_peak_injection_bandwidth.txt", "csit_clx_max_bandwidth.txt",
                                         "csit_clx_c2c_latency.txt")]
    imported = cli("import", "--db", db, "--results", tmp_path / "results", "--host", "lab1", "mlc", *files)
    assert imported.returncode == 0, imported.stderr
    assert cli("report", "--db", db, "--out", out).returncode == 0
    (page,) = out.glob("lab1*.html")

    devtools = DevTools(_page_websocket_url(chromium))
    try:
        for domain in ("Runtime", "Log", "Page"):
            devtools.call(f"{domain}.enable")
        devtools.call("Page.navigate", url=page.as_uri())
        devtools.wait_for_event("Page.loadEventFired", timeout_s=60)
        drawn = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # vega-embed renders asynchronously after load
            drawn = devtools.evaluate(PROBE)
            if drawn["symbols"] and drawn["bars"]:
                break
            time.sleep(0.2)
        time.sleep(0.5)
        devtools.evaluate("1")
    finally:
        devtools.close()

    errors = [
        event["params"] for event in devtools.events
        if event.get("method") == "Runtime.exceptionThrown"
        or (event.get("method") == "Runtime.consoleAPICalled" and event["params"]["type"] in ("error", "assert"))
        or (event.get("method") == "Log.entryAdded" and event["params"]["entry"]["level"] == "error")
    ]
    assert errors == []
    assert drawn["lines"] == 1 and drawn["symbols"] == 19  # one ladder, one point per injected delay
    assert drawn["bars"] == 10  # five read-write mixes, peak injection and max bandwidth
