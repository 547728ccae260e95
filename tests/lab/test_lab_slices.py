"""A run split into slices, as several controllers or AWX job slices run it: the three lab hosts measured by three
runs of playbooks/measure_slice.yml started at once, each --limit to one host (and localhost), all collecting into
one shared results tree; then playbooks/load_and_report.yml once over the whole tree. Every host lands in the
warehouse exactly once, the fleet page lists all three and loads in Chromium without a console message, and a
second report step loads nothing again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb
import pytest

from lab import LabRun

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from browser_page import CHROMIUM, Browser  # noqa: E402  (tests/browser is not a package)

pytestmark = pytest.mark.lab

# The smallest run that still makes a whole bundle: one small experiment, few samples.
FAST = {"kernels_samples": 3, "kernels_min_sample_ms": 2}
RUN_ID = "20261127T120000Z-a1ce05"  # one id given to every slice: one run
SLICES = (["fslab1"], ["fslab2"], ["fslab3"])


@pytest.fixture(scope="module")
def sliced(lab, tmp_path_factory):
    """Three slices at once into one results tree, then one report step: (run, slice outputs, report output)."""
    run = LabRun(tmp_path_factory.mktemp("slices"), lab.inventory)
    started = [run.start("playbooks/measure_slice.yml", "--tags", "zero_queue", "--limit", ",".join([*hosts, "localhost"]),
                         "-e", json.dumps({**FAST, "fleet_run_id": RUN_ID})) for hosts in SLICES]
    # all three were started before any finished: they run at once (each takes tens of seconds)
    running_together = all(proc.poll() is None for proc in started)
    outputs = []
    for hosts, proc in zip(SLICES, started):
        output, _ = proc.communicate(timeout=600)
        run.keep_log(f"measure_slice-{hosts[0]}", output)
        outputs.append((proc.returncode, output))
    warehouse_before_report = run.warehouse.exists()
    report = run.run("playbooks/load_and_report.yml", "-e", json.dumps({"fleet_run_id": RUN_ID}))
    return run, outputs, running_together, warehouse_before_report, report


def test_each_slice_measures_only_its_hosts_and_loads_nothing(sliced, hosts_as_found):
    run, outputs, running_together, warehouse_before_report, _ = sliced
    assert running_together, "a slice finished before the last one started"
    for (returncode, output), hosts in zip(outputs, SLICES):
        assert returncode == 0, output[-4000:]
        others = {"fslab1", "fslab2", "fslab3"} - set(hosts)
        assert not any(f"[{other}]" in output for other in others), f"slice {hosts} touched {others}"
        assert "PLAY [Warehouse" not in output and "PLAY [Report" not in output
    assert not warehouse_before_report, "a slice loaded the warehouse: only the report step may"
    manifests = run.manifests()
    assert sorted(manifests) == ["fslab1", "fslab2", "fslab3"]
    assert {manifest["run_id"] for manifest in manifests.values()} == {RUN_ID}
    assert sorted(path.parent.name for path in run.results.glob(f"{RUN_ID}/*/manifest.json")) == sorted(manifests)


def test_the_report_step_loads_every_host_once(sliced):
    run, _, _, _, report = sliced
    assert report.returncode == 0, report.stdout[-4000:] + report.stderr[-2000:]
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        runs = db.execute("select host, run_id, status from runs order by host").fetchall()
        experiments = db.execute("select host, count(*) from experiments where experiment = 'zero_queue' "
                                 "group by host order by host").fetchall()
    assert runs == [(host, RUN_ID, "complete") for host in ("fslab1", "fslab2", "fslab3")]
    assert experiments == [("fslab1", 1), ("fslab2", 1), ("fslab3", 1)]
    # the report step once more: every bundle is already there, nothing is loaded twice
    again = run.run("playbooks/load_and_report.yml", "-e", json.dumps({"fleet_run_id": RUN_ID}))
    assert again.returncode == 0, again.stdout[-4000:]
    assert " loaded " not in again.stdout and "replaced" not in again.stdout, again.stdout[-4000:]
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        assert db.execute("select count(*) from runs").fetchone()[0] == 3


def test_the_fleet_page_lists_every_slices_hosts_in_chromium(sliced, tmp_path):
    run, _, _, _, _ = sliced
    index = run.reports / "index.html"
    for host in ("fslab1", "fslab2", "fslab3"):
        assert f'href="{host}.html"' in index.read_text()
        assert (run.reports / f"{host}.html").exists()
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install chromium)")
    browser = Browser(tmp_path / "profile")
    try:
        loaded = browser.open(index)
        linked = browser.evaluate("Array.from(document.querySelectorAll('a[href$=\".html\"]'))"
                                  ".map(a => a.getAttribute('href')).filter(h => h.startsWith('fslab'))")
        browser.screenshot(run.root / "fleet-page.png")
    finally:
        browser.close()
    assert loaded.console == [], loaded.console
    assert [url for url in loaded.requests if not url.startswith("file:")] == []
    for chart in loaded.charts:
        assert chart["svg"] and chart["marks"] > 0 and not chart["nan"], chart
    assert {"fslab1.html", "fslab2.html", "fslab3.html"} <= set(linked)
