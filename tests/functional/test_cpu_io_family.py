"""The CPU/OS/IO family through site.yml on this machine: affinity, smt and aio in one `--tags` run (smt is
a recorded skip where the host has no SMT siblings), then the workloads role with a failing command, and
preflight refusing a malformed fleet_workloads. Each run leaves the knobs, the state file and the scratch
directories as it found them."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import duckdb
import pytest

from helpers import STATE_FILE, Outputs, knob_values, run_playbook, scratch_leftovers

pytestmark = pytest.mark.functional

SYSFS = Path("/sys/devices/system/cpu")


def host_has_smt_siblings() -> bool:
    return any("," in path.read_text() or "-" in path.read_text()
               for path in SYSFS.glob("cpu[0-9]*/topology/thread_siblings_list"))


def rows(outputs: Outputs, sql: str) -> list[tuple]:
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        return db.execute(sql).fetchall()


def perf_capability(outputs: Outputs) -> str:
    return rows(outputs, "select facts->>'$.perf.capability' from facts")[0][0]


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    """One quick `site.yml --tags affinity,smt,aio` run, its aio scratch file in a directory of ours."""
    outputs = Outputs(tmp_path_factory.mktemp("cpu_io"))
    aio_directory = outputs.root / "aio-scratch"
    aio_directory.mkdir()
    before = knob_values()
    proc = run_playbook("site.yml", outputs, "--tags", "affinity,smt,aio",
                        "-e", json.dumps({"kernels_aio_directory": str(aio_directory)}))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return {"outputs": outputs, "aio_directory": aio_directory, "before": before, "after": knob_values(),
            "state_file_left": os.path.exists(STATE_FILE), "scratch_left": scratch_leftovers()}


def test_the_run_left_the_machine_as_it_found_it(family):
    assert family["after"] == family["before"]
    assert not family["state_file_left"] and family["scratch_left"] == []
    # the aio scratch file was anonymous, and the directory we named is kept, empty
    assert family["aio_directory"].is_dir() and list(family["aio_directory"].iterdir()) == []


def test_tags_ran_the_family_and_smt_says_why_it_did_not_measure(family):
    outputs = family["outputs"]
    experiments = {e["name"]: e for e in outputs.manifest()["experiments"]}
    assert set(experiments) == {"affinity", "smt", "aio"}
    assert experiments["affinity"]["status"] == "ok" and experiments["aio"]["status"] == "ok"
    if host_has_smt_siblings():
        assert experiments["smt"]["status"] == "ok"
        return
    assert experiments["smt"]["status"] == "skipped"
    assert "no SMT siblings" in experiments["smt"]["notes"][0]
    assert rows(outputs, "select count(*) from smt_interference") == [(0,)]
    assert outputs.manifest()["status"] == "complete"


def test_affinity_compares_placements_with_the_scheduler_s_activity(family):
    outputs = family["outputs"]
    summary = {(p, w): (threads, repeats, per_thread, migrations, perf_migrations, perf_switches)
               for p, w, threads, repeats, per_thread, migrations, perf_migrations, perf_switches in rows(
                   outputs, "select placement, workload, threads, repeats, per_thread_throughput, migrations_observed, "
                            "perf_cpu_migrations, perf_context_switches from affinity_summary")}
    assert set(summary) == {(p, w) for p in ("unpinned", "pinned") for w in ("compute", "memory")}
    counted = perf_capability(outputs) != "none"
    # quick's 2 fresh runs, or 1 where the plan's budget cut them (its cut says so)
    (cuts,) = rows(outputs, "select coalesce(cuts, '') from plan_experiments where experiment = 'affinity'")[0]
    planned_repeats = 1 if "1 runs of every placement and workload" in cuts else 2
    for (placement, _), (threads, repeats, per_thread, migrations, perf_migrations, perf_switches) in summary.items():
        assert threads >= 1 and repeats == planned_repeats and per_thread > 0
        assert (perf_migrations is not None and perf_switches is not None) == counted
        if placement == "pinned":
            assert migrations == 0
    pinned = rows(outputs, "select cpu, cpus_seen from affinity_threads where placement = 'pinned'")
    assert pinned and all(json.loads(seen) == [cpu] for cpu, seen in pinned)


def test_aio_measures_every_engine_and_depth_consistently(family):
    outputs = family["outputs"]
    curve = rows(outputs, "select engine, queue_depth, iops, latency_mean_us, p50_us, p99_us, direct, cache_dropped "
                          "from aio_curve")
    engines = {engine for engine, *_ in curve}
    assert engines >= {"blocking", "posix_aio"}
    # every depth, or those the plan's budget kept (its cut names them)
    (cuts,) = rows(outputs, "select coalesce(cuts, '') from plan_experiments where experiment = 'aio'")[0]
    kept = re.search(r"queue depths ([\d, ]+) of ", cuts)
    depths = [int(depth) for depth in kept.group(1).split(", ")] if kept else [1, 2, 4, 8, 16, 32]
    assert sorted(depth for engine, depth, *_ in curve if engine == "blocking") == depths
    (notes,) = rows(outputs, "select notes from experiments where experiment = 'aio'")[0]
    assert "io_uring" in engines or "io_uring left out" in notes
    for engine, depth, iops, mean_us, p50, p99, direct, cache_dropped in curve:
        # Little's law: reads in flight = IOPS x latency; every engine keeps `depth` in flight
        assert 0.8 < iops * mean_us / 1e6 / depth < 1.2, (engine, depth, iops, mean_us)
        assert p50 <= p99
        assert isinstance(direct, bool) and cache_dropped is not None


def test_the_host_page_shows_the_family(family):
    page = (family["outputs"].reports / "localhost.html").read_text()
    for section in ("affinity", "aio"):
        assert f'id="{section}-chart"' in page, section
    assert 'id="affinity-extra-table"' in page and 'id="aio-table"' in page
    if not host_has_smt_siblings():
        assert 'id="smt-notes"' in page and "Not run: no SMT siblings" in page


def test_workloads_run_under_perf_and_a_failing_one_is_recorded_while_the_rest_go_on(outputs, knobs_unchanged):
    workloads = [{"name": "checksum", "command": ["sha256sum", sys.executable], "repeats": 2},
                 {"name": "fails", "command": ["sh", "-c", "echo no such input >&2; exit 3"]},
                 {"name": "after", "command": ["sort", "/etc/services"]}]
    proc = run_playbook("site.yml", outputs, "--tags", "workloads", "-e", json.dumps({"fleet_workloads": workloads}))
    assert proc.returncode == 0, proc.stdout[-4000:]
    manifest = outputs.manifest()
    (experiment,) = manifest["experiments"]
    assert experiment["name"] == "workloads" and experiment["status"] == "failed"
    assert manifest["status"] == "partial"
    assert experiment["error"].startswith("fails: exit 5: no such input")
    assert "exited with status 3" in experiment["error"]
    capability = perf_capability(outputs)
    profile = {row[0]: row[1:] for row in rows(
        outputs, "select workload, status, runs, counter_tier, classification, evidence from workload_profile")}
    # the reference workload runs first on every host; the user's add to it
    assert set(profile) == ({"reference_alloc_walk", "checksum", "fails", "after"} if capability != "none"
                            else {"reference_alloc_walk", "checksum", "after"})
    assert profile["checksum"][:2] == ("ok", 2) and profile["after"][:2] == ("ok", 1)
    tier = capability  # the tier a workload rests on is the one the facts probed
    assert profile["checksum"][2] == tier and profile["checksum"][4].startswith(f"counter tier {tier}")
    if tier != "hardware":
        assert profile["checksum"][3] == "undecided: counters unavailable"
    assert any(note.startswith(f"counter tier: {tier}") for note in experiment["notes"])
    if capability != "none":
        assert profile["fails"][:1] == ("failed",)
        bundle = outputs.bundles()[0]
        assert (bundle / "raw" / "workloads" / "checksum.time.perf-report.txt").exists()
        # the time profile's outcome is said, whichever it was: a ~1 ms checksum can take no sample on a busy
        # machine, and the tool then says so (plugins/filter/workloads.py) rather than rank functions
        time_event = {"hardware": "cycles", "software": "cpu-clock"}[capability]
        outcomes = (f"checksum: top functions (perf record, {time_event}): ",
                    f"checksum: perf record -e {time_event} took no samples",
                    f"checksum: perf report of {time_event} kept in the bundle but not read: ")
        said = [note for note in experiment["notes"] if note.startswith(outcomes)]
        assert len(said) == 1, experiment["notes"]
    page = (outputs.reports / "localhost.html").read_text()
    assert 'id="workloads-chart"' in page and 'id="workloads-table"' in page


def test_preflight_refuses_a_workload_command_written_as_one_string(outputs, knobs_unchanged):
    proc = run_playbook("site.yml", outputs, "--tags", "workloads",
                        "-e", json.dumps({"fleet_workloads": [{"name": "gz", "command": "gzip -9 file"}]}))
    assert proc.returncode != 0
    assert "fleet_workloads[0] (gz).command is one string" in proc.stdout
    assert outputs.bundles() == []
