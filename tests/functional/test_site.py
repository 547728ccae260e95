"""site.yml end to end on this machine (quick profile): bundle, warehouse, reports, restore."""

from __future__ import annotations

import glob
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from helpers import (BIN, PROJECT, STATE_FILE, Outputs, knob_values, playbook_argv,
                      run_playbook, scratch_leftovers)

pytestmark = pytest.mark.functional

# Every experiment the kernels role runs by default.
FAMILY = {"latency_sweep", "zero_queue", "pattern_stride", "tlb", "mlp", "write_cost", "c2c"}
# smt is a recorded skip on a host whose CPUs have no SMT siblings (the dev VMs).
HAS_SMT_SIBLINGS = any("," in path.read_text() or "-" in path.read_text()
                       for path in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology/thread_siblings_list"))
CPU_OS_IO = {"affinity": "ok", "aio": "ok", "smt": "ok" if HAS_SMT_SIBLINGS else "skipped"}
# The bandwidth family: every experiment measures on any host (loaded_latency keeps its idle point alone
# where the host has one CPU).
BANDWIDTH = {"bandwidth", "stride_bandwidth", "rw_mix", "thread_sweep", "loaded_latency", "saxpy", "prefetch"}
# numa_matrix is a recorded skip on a host with one NUMA node (the dev VMs).
NUMA_NODES = len(list(Path("/sys/devices/system/node").glob("node[0-9]*")))
# Every experiment a default run records: the kernels, fio, and MLC (a recorded skip: nobody
# supplied it, and it cannot be downloaded).
# The compute family measures on any host (energy and temperature say why they are absent where they are).
COMPUTE = {"core_clock", "peak_flops"}
# workloads: the reference workload (alloc_walk) is profiled on every host by default
DEFAULT_RUN = {**{name: "ok" for name in FAMILY | BANDWIDTH | COMPUTE}, **CPU_OS_IO, "fio": "ok", "mlc": "skipped",
               "workloads": "ok",
               "numa_matrix": "ok" if NUMA_NODES > 1 else "skipped"}


def test_site_run_succeeds_and_restores(site_run):
    outputs, proc, before = site_run
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert knob_values() == before
    assert not scratch_leftovers()
    assert not os.path.exists(STATE_FILE)


def test_bundle_and_manifest(site_run):
    outputs, _, before = site_run
    (bundle,) = outputs.bundles()
    manifest = outputs.manifest()
    assert manifest["status"] == "complete"
    assert bundle.name == manifest["host"] == "localhost"
    assert bundle.parent.name == manifest["run_id"]
    knobs = {k["name"]: k for k in manifest["knobs"]}
    for name, value in before.items():
        assert knobs[name]["before"] == value
        assert knobs[name]["after"] == value
    assert knobs["thp_enabled"]["applied"] == "always"
    assert knobs["perf_event_paranoid"]["applied"] == "-1"
    assert knobs["cpufreq_governor"]["available"] is False or knobs["cpufreq_governor"]["applied"]
    experiments = {e["name"]: e for e in manifest["experiments"]}
    assert {name: e["status"] for name, e in experiments.items()} == DEFAULT_RUN, experiments
    assert "mlc_path" in " ".join(experiments["mlc"]["notes"])
    experiment = experiments["latency_sweep"]
    lines = (bundle / experiment["file"]).read_text().splitlines()
    assert len(lines) >= 10
    # each point's own counters: software events count on any host, hardware ones where the PMU has them
    assert json.loads(lines[0])["context"]["counters"]["events"]["task-clock"]["state"] == "counted"
    assert manifest["facts"]["topology"]["core_kinds"]
    if NUMA_NODES < 2:
        assert "one NUMA node" in " ".join(experiments["numa_matrix"]["notes"])
    assert (bundle / "raw" / "build.log").exists()
    l1 = min(c["size_bytes"] for c in manifest["facts"]["caches"] if c["level"] == 1)
    assert any(json.loads(line)["params"]["working_set_bytes"] <= l1 for line in lines)


def test_warehouse_rows(site_run):
    outputs, _, _ = site_run
    manifest = outputs.manifest()
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        runs = db.execute("select run_id, host from runs").fetchall()
        assert runs == [(manifest["run_id"], "localhost")]
        curve = db.execute("select working_set_bytes, median_ns from latency_curve where page_policy = 'thp' "
                           "order by working_set_bytes").fetchall()
        samples = db.execute("select count(*) from samples").fetchone()[0]
        knobs = db.execute("select count(*) from knob_values").fetchone()[0]
    assert len(curve) >= 10
    assert samples >= len(curve) * 3
    assert knobs == len(manifest["knobs"])
    smallest, largest = curve[0][1], curve[-1][1]
    assert smallest < largest / 10, f"L1-sized {smallest} ns vs DRAM-sized {largest} ns"


def test_reports_are_self_contained(site_run):
    outputs, _, _ = site_run
    manifest = outputs.manifest()
    host_page = (outputs.reports / "localhost.html").read_text()
    index = (outputs.reports / "index.html").read_text()
    assert manifest["run_id"] in host_page and "localhost.html" in index
    for page in (host_page, index):
        assert not re.search(r"<(script|link)[^>]+(src|href)=[\"']https?:", page), "page loads from network"


def test_ingest_again_changes_nothing(site_run):
    outputs, _, _ = site_run
    proc = run_playbook("playbooks/warehouse.yml", outputs)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "unchanged" in proc.stdout
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        assert db.execute("select count(*) from runs").fetchone()[0] == 1


def test_kernel_stage_failure_is_recorded_and_restored(outputs, knobs_unchanged):
    """Every kernel invocation rejects an argument: the experiment fails, the run goes on,
    the host is restored and the failure lands in the bundle, the warehouse and the report."""
    proc = run_playbook("site.yml", outputs, "--tags", "latency_sweep",
                        "-e", '{"kernels_extra_args": ["--no-such-option"]}')
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "latency_sweep failed" in proc.stdout
    manifest = outputs.manifest()
    assert manifest["status"] == "failed"
    (experiment,) = manifest["experiments"]
    assert experiment["status"] == "failed" and "no-such-option" in experiment["error"]
    assert experiment["file"] is None
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        assert db.execute("select status from runs").fetchone()[0] == "failed"
    assert "no-such-option" in (outputs.reports / "localhost.html").read_text()


def points_written() -> int:
    files = glob.glob("/var/tmp/fleetscope-*/bundle/results/latency_sweep.jsonl")
    return len(Path(files[0]).read_text().splitlines()) if files else 0


def test_killed_kernel_keeps_what_was_measured(outputs, knobs_unchanged):
    """A kernel process killed mid-sweep: that point fails, the others are kept (partial)."""
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1")
    argv = playbook_argv("site.yml", outputs, "--tags", "latency_sweep",
                         "-e", "kernels_latency_sweep_max_bytes=67108864")
    killed = None
    with subprocess.Popen(argv, cwd=PROJECT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        deadline = time.monotonic() + 300
        while killed is None and proc.poll() is None and time.monotonic() < deadline:
            # let a few points finish first so there is something to keep
            # the kernel itself (its command line starts with the binary), not the perf stat around it
            pids = subprocess.run(["pgrep", "-f", "^[^ ]*/fleetscope-kernels chase"], capture_output=True,
                                  text=True, check=False).stdout.split()
            if pids and points_written() >= 3:
                os.kill(int(pids[0]), signal.SIGKILL)
                killed = pids[0]
            time.sleep(0.05)
        out, _ = proc.communicate(timeout=600)
    assert killed, "never saw a kernel process to kill"
    assert proc.returncode == 0, out[-4000:]
    manifest = outputs.manifest()
    assert manifest["status"] == "partial"
    (experiment,) = manifest["experiments"]
    # how it ended, in words (filter kernel_status): perf stat reports the signal or, when the kernel died
    # before perf waited for it, exit 0 with no exit note from the kernel; either way the point is killed
    assert experiment["status"] == "failed" and "killed" in experiment["error"], experiment["error"]
    (bundle,) = outputs.bundles()
    assert len((bundle / "results" / "latency_sweep.jsonl").read_text().splitlines()) >= 3


def test_check_mode_changes_nothing(outputs, knobs_unchanged):
    proc = run_playbook("site.yml", outputs, "--check")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert not outputs.results.exists()
    assert not outputs.warehouse.exists()
    assert not outputs.reports.exists()


def test_analysis_queries_run_on_a_real_warehouse(site_run):
    """Every SQL example in analysis/README.md runs against the warehouse a real run produced."""
    outputs, _, _ = site_run
    queries = re.findall(r"```sql\n(.*?)```", (PROJECT / "analysis" / "README.md").read_text(), re.S)
    assert queries
    for query in queries:
        proc = subprocess.run([str(BIN / "fleetscope"), "query", "--db", str(outputs.warehouse),
                               "--format", "json", query], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, query + proc.stderr
        assert json.loads(proc.stdout), f"no rows from:\n{query}"
