"""The kernels' perf stat wrapper (plugins/filter/experiments.py) and the facts
module's perf capability probe, run against this machine's real perf."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins" / "filter"))
sys.path.insert(0, str(ROOT / "plugins" / "modules"))

from experiments import failure_summary, kernel_exit, perf_points  # noqa: E402
import fleetscope_facts  # noqa: E402

from fleetscope.ingest.parsers import parse_file  # noqa: E402

POINTS = [{"label": "16 KiB", "argv": ["/bin/sleep", "0.01"]}, {"label": "1 MiB", "argv": ["/bin/true"]}]
EVENTS = ["task-clock", "cycles"]


@pytest.mark.parametrize("capability", ["hardware", "software"])
def test_points_are_wrapped_where_perf_can_count(capability):
    wrapped = perf_points(POINTS, "zero_queue", {"capability": capability}, EVENTS)
    assert [point["argv"] for point in wrapped] == [
        ["perf", "stat", "-x,", "-o", f"raw/perf/zero_queue/{index:03d}.csv", "-e", "task-clock,cycles", "--",
         *point["argv"]] for index, point in enumerate(POINTS)]
    assert [point["raw"] for point in wrapped] == [
        {"path": f"raw/perf/zero_queue/{index:03d}.csv", "tool": "perf",
         "params": {"point": point["label"], "point_index": index}} for index, point in enumerate(POINTS)]


@pytest.mark.parametrize("perf, enabled", [({"capability": "none", "reason": "perf is not installed"}, True),
                                           ({}, True), ({"capability": "hardware"}, False)])
def test_points_run_bare_without_perf_or_when_switched_off(perf, enabled):
    wrapped = perf_points(POINTS, "zero_queue", perf, EVENTS, enabled)
    assert [point["argv"] for point in wrapped] == [point["argv"] for point in POINTS]
    assert all(point["raw"] is None for point in wrapped)


def test_the_probe_matches_what_perf_counts_here():
    probe = fleetscope_facts.perf_capability()
    assert probe["capability"] in ("hardware", "software", "none")
    assert probe["reason"]
    if probe["capability"] == "none":
        return
    # Whatever the probe says must agree with a real perf stat run on this machine.
    result = subprocess.run(["perf", "stat", "-x,", "-e", "cycles,task-clock", "--", "true"],
                            capture_output=True, text=True, check=True)
    rows = {row[2]: row[0] for row in csv.reader(result.stderr.splitlines()) if len(row) > 2}
    assert probe["events"]["task-clock"] == "counted"
    assert (probe["capability"] == "hardware") == (not rows["cycles"].startswith("<"))


def test_a_wrapped_point_writes_a_csv_the_parser_reads(tmp_path):
    if fleetscope_facts.perf_capability()["capability"] == "none":
        pytest.skip("perf cannot count on this machine: " + fleetscope_facts.perf_capability()["reason"])
    (point,) = perf_points(POINTS[:1], "zero_queue", {"capability": "software"}, ["task-clock", "cycles"])
    (tmp_path / "raw/perf/zero_queue").mkdir(parents=True)
    subprocess.run(point["argv"], cwd=tmp_path, check=True)
    parsed = parse_file("perf", tmp_path / point["raw"]["path"])
    events = {event["name"]: event for event in parsed["events"]}
    assert events["task-clock"]["state"] == "counted" and events["task-clock"]["value"] > 0
    assert events["cycles"]["state"] in ("counted", "not supported")


NOTE = "fleetscope-kernels: exit {}"


@pytest.mark.parametrize("stderr, status", [
    ("chase: 1/1 working_set=16384\n" + NOTE.format(0) + "\n", 0),
    ("fleetscope-kernels chase: unknown option\n" + NOTE.format(2), 2),
    # killed: perf's signal line, or (when perf lost the child's status) nothing at all
    ("fslab fault injection: zero_queue on fslab2 stores through a NULL pointer\n", None),
    ("/x/build/fleetscope-kernels: Segmentation fault\n", None),
    ("", None),
    # the note is a whole line, the last one counts
    ("chase: fleetscope-kernels: exit 0 is not a note\n", None),
    (NOTE.format(0) + "\n" + NOTE.format(3) + "\n", 3),
])
def test_a_kernel_point_ended_by_itself_only_with_its_exit_note(stderr, status):
    assert kernel_exit({"rc": 0, "stderr": stderr}) == status


def test_the_failure_says_killed_where_the_kernel_wrote_no_exit_note():
    looped = {"failed": True, "results": [
        {"failed": False, "rc": 0, "stderr": NOTE.format(0), "item": {"label": "16 KiB"}},
        {"failed": True, "rc": 0, "stderr": "fslab fault injection: zero_queue on fslab2 stores through a NULL pointer",
         "item": {"label": "all points"}},
        {"failed": True, "rc": 0, "stderr": "zero_queue: no cache\n" + NOTE.format(4), "item": {"label": "lost"}},
        {"failed": True, "rc": -11, "stderr": "", "item": {"label": "bare"}},
        {"failed": True, "rc": 2, "stderr": "bad size\n" + NOTE.format(2), "item": {"label": "usage"}},
    ]}
    assert failure_summary(looped).splitlines() == [
        "all points: killed (no exit note from the kernel, though what ran it reported exit 0): "
        "fslab fault injection: zero_queue on fslab2 stores through a NULL pointer",
        "lost: exit 4: zero_queue: no cache | fleetscope-kernels: exit 4",
        "bare: killed by signal 11: ",
        "usage: exit 2: bad size | fleetscope-kernels: exit 2",
    ]
