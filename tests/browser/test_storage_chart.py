"""The host page's storage section in headless Chromium: the percentile-vs-queue-depth chart draws one
panel per job and direction, with no console message, from real fio outputs loaded by `fleetscope import`."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIO = [FIXTURES / "fio_samples" / "fio-3.36_io_uring_randread_4k_qd32_pctlist.json",
       FIXTURES / "fio_samples" / "fio-3.16_libaio_randrw70_4k_qd1_nvme.json"]

pytestmark = pytest.mark.browser

PROBE = """(() => {
  const svg = document.querySelector('#storage-chart svg');
  if (!svg) return null;
  return {
    lines: svg.querySelectorAll('.mark-line.role-mark path').length,
    titles: Array.from(svg.querySelectorAll('.role-title-text text')).map(t => t.textContent),
  };
})()"""


def test_the_storage_chart_draws_a_panel_per_job_and_direction(cli, browser, tmp_path):
    db, out = tmp_path / "fleet.duckdb", tmp_path / "reports"
    assert cli("import", "--db", db, "--results", tmp_path / "results", "--host", "lab-fio", "fio", *FIO).returncode == 0
    assert cli("report", "--db", db, "--out", out).returncode == 0
    loaded = browser.open(out / "lab-fio.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    chart = browser.evaluate(PROBE)
    assert chart is not None, "no <svg> inside #storage-chart"
    assert sorted(chart["titles"]) == ["Job1 · read", "Job1 · write", "Storage latency percentiles vs queue depth",
                                       "randread_bs4k · read"]
    # one line per percentile in each panel: 4 in the qd32 file's percentile_list, 6 of fio's default list
    assert chart["lines"] == 4 + 6 + 6
