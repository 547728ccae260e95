"""Workload profiles on host pages in headless Chromium (issue 31): a real run of the reference workload on the
dev VM (tests/fixtures/workload_run: `site.yml --tags workloads`, perf counting software events only) and the
allocator study's recorded output imported with `fleetscope import perf`. Both pages load with no console
message; the VM's page says what it could not decide and why, the study's shows case A, its next step and the
time-vs-miss table with the kernel's page clearing marked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
STUDY = [FIXTURES / "perf_samples" / name for name in (
    "hakmem_phase44_perf_stat.txt", "hakmem_phase44_perf_record_top20_cycles.txt",
    "hakmem_phase44_perf_record_top12_cache_misses.txt")]
PROBE = """(() => {
  const svg = document.querySelector('#workloads-chart svg');
  const text = id => (document.getElementById(id) || {}).textContent || '';
  return {bars: svg ? svg.querySelectorAll('.mark-rect.role-mark path').length : null,
          cases: Array.from(document.querySelectorAll('[id^="workloads-finding-"]')).map(e => e.textContent).join(' '),
          table: text('workloads-extra-table'), functions: text('workload-functions'),
          summary: document.body.textContent.includes('Reference workload')};
})()"""


@pytest.fixture(scope="module")
def pages(bundle_tools, tmp_path_factory):
    _, cli = bundle_tools
    work = tmp_path_factory.mktemp("workload-pages")
    results, db, out = work / "results", work / "fleet.duckdb", work / "reports"
    shutil.copytree(FIXTURES / "workload_run" / "results", results)
    assert cli("ingest", results, "--db", db).returncode == 0
    imported = cli("import", "--db", db, "--results", results, "--host", "alloc-lab", "--workload", "hakmem",
                   "--started-at", "2025-12-16", "perf", *STUDY)
    assert imported.returncode == 0, imported.stderr
    report = cli("report", "--db", db, "--out", out)
    assert report.returncode == 0, report.stderr
    return out


def test_the_reference_workload_page_says_what_the_vm_could_not_decide(pages, browser, tmp_path):
    loaded = browser.open(pages / "localhost.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    found = browser.evaluate(PROBE)
    # the time profile's top 12 functions (cpu-clock; no miss profile without a PMU)
    assert found["bars"] == 12 and found["summary"]
    assert "could not decide between A, B and C" in found["cases"]
    assert "not supported: counter tier software" in found["cases"]
    assert "walk_blocks" in found["functions"] and "churn_blocks" in found["functions"]
    browser.screenshot(tmp_path / "reference.png")


def test_the_studys_page_shows_case_a_its_next_step_and_the_kernels_misses(pages, browser, tmp_path):
    loaded = browser.open(pages / "alloc-lab.html")
    assert loaded.console == [] and loaded.charts_state == "drawn"
    found = browser.evaluate(PROBE)
    # the top 12 functions: the 10 with at least 0.5% of the time (malloc ... mid_desc_lookup_cached) and the kernel's
    # two biggest by misses; a time bar for each of the 10, a miss bar for the 10 of the 12 the miss list names
    assert found["bars"] == 10 + 10
    assert "A: store/dependency-bound" in found["cases"] and "A: store/dependency-bound" in found["table"]
    assert "store-to-load forwarding and dependency chains" in found["cases"]
    assert "93.5% of the cache-misses samples are in the kernel" in found["cases"]
    assert "clear_page_erms" in found["functions"] and "misses far above time" in found["functions"]
    assert "time far above misses" in found["functions"]
    browser.screenshot(tmp_path / "study.png")
