"""The host page's storage section in headless Chromium: the percentile-vs-queue-depth chart draws one
panel per job and direction, with no console errors, from real fio outputs loaded by `fleetscope import`."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_report_page import CHROMIUM, DevTools, _page_websocket_url, chromium  # noqa: F401 (fixture)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIO = [FIXTURES / "fio_samples" / "fio-3.36_io_uring_randread_4k_qd32_pctlist.json",
       FIXTURES / "fio_samples" / "fio-3.16_libaio_randrw70_4k_qd1_nvme.json"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed (apt-get install chromium)"),
]

PROBE = """(() => {
  const svg = document.querySelector('#storage-chart svg');
  if (!svg) return null;
  return {
    lines: svg.querySelectorAll('.mark-line.role-mark path').length,
    titles: Array.from(svg.querySelectorAll('.role-title-text text')).map(t => t.textContent),
  };
})()"""


def test_the_storage_chart_draws_a_panel_per_job_and_direction(cli, chromium, tmp_path):  # noqa: F811
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("import", "--db", db, "--results", tmp_path / "results", "--host", "lab-fio", "fio", *FIO).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    devtools = DevTools(_page_websocket_url(chromium))
    try:
        for domain in ("Runtime", "Log", "Page"):
            devtools.call(f"{domain}.enable")
        devtools.call("Page.navigate", url=(out / "lab-fio.html").as_uri())
        devtools.wait_for_event("Page.loadEventFired", timeout_s=60)
        chart, deadline = None, time.monotonic() + 30
        while time.monotonic() < deadline:
            chart = devtools.evaluate(PROBE)
            if chart and chart["lines"]:
                break
            time.sleep(0.2)
        time.sleep(0.5)
        devtools.evaluate("1")
    finally:
        devtools.close()
    errors = [event["params"] for event in devtools.events
              if event.get("method") == "Runtime.exceptionThrown"
              or (event.get("method") == "Runtime.consoleAPICalled" and event["params"]["type"] in ("error", "assert"))
              or (event.get("method") == "Log.entryAdded" and event["params"]["entry"]["level"] == "error")]
    assert errors == []
    assert chart is not None, "no <svg> inside #storage-chart"
    assert sorted(chart["titles"]) == ["Job1 · read", "Job1 · write", "Storage latency percentiles vs queue depth",
                                       "randread_bs4k · read"]
    # one line per percentile in each panel: 4 in the qd32 file's percentile_list, 6 of fio's default list
    assert chart["lines"] == 4 + 6 + 6
