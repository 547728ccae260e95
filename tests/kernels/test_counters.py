"""Per-point counters: perf_event_open around each point's timed samples (kernels/src/counters.c).
Hardware events count where the PMU has them; on a VM without a virtual PMU they keep their state
`not supported` with no value. Software events count everywhere, so they are tested here."""

import os
import resource
import shutil
import subprocess

import pytest

from fleetscope.ingest.bundle import _POINT_VALIDATOR, _counters_problem, _schema_problem
from kernelrun import OtherLoad, QUICK, parse_lines

EVENTS = ("cycles", "instructions", "task-clock", "page-faults", "context-switches", "cpu-migrations")
SOFTWARE = ("task-clock", "page-faults", "context-switches", "cpu-migrations")
STATES = {"counted", "not supported", "not permitted", "not counted", "failed"}


def hardware_counts() -> bool | None:
    """What perf itself says about the cycles event here (None: perf missing)."""
    if shutil.which("perf") is None:
        return None
    result = subprocess.run(["perf", "stat", "-x,", "-e", "cycles", "--", "true"], capture_output=True,
                            text=True, env=dict(os.environ, LC_ALL="C"), timeout=30, check=False)
    return bool(result.returncode == 0 and result.stderr.split(",")[0].strip().isdigit())


def check_counters(counters: dict) -> None:
    assert counters["scope"] == "timed region"
    assert set(counters["events"]) == set(EVENTS)
    for name, event in counters["events"].items():
        assert event["state"] in STATES, name
        if event["state"] == "counted":
            assert isinstance(event["value"], int) and event["value"] >= 0, name
            assert 0 < event["time_running_ns"] <= event["time_enabled_ns"], name
            assert 0 < event["running_fraction"] <= 1
        else:  # a state, never a zero
            assert event["value"] is None and event["running_fraction"] is None, name
    for name in SOFTWARE:  # software events never multiplex
        event = counters["events"][name]
        assert event["state"] == "counted", (name, event)
        assert event["time_running_ns"] == event["time_enabled_ns"]
    hardware = counters["events"]["cycles"]["state"] == "counted" and counters["events"]["instructions"]["state"] == "counted"
    assert (counters["ipc"] is not None) == hardware
    if hardware:
        assert counters["ipc"] == pytest.approx(
            counters["events"]["instructions"]["value"] / counters["events"]["cycles"]["value"])


def test_saxpy_points_count_their_timed_samples_only(build):
    """The counts cover the samples, not the process: the task-clock of every point together is
    less than the CPU time the process took (the arrays' set-up and the calibration are outside),
    and about each point's own sampling time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([str(build["binary"]), "saxpy", "--size", "32m", "--strides", "1,16",
                             "--samples", "3", "--min-sample-ms", "5"], capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0, result.stderr
    points = parse_lines(result.stdout)
    assert len(points) == 2
    process_cpu_ns = ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)) * 1e9
    task_clock = []
    for point in points:
        counters = point["context"]["counters"]
        check_counters(counters)
        task = counters["events"]["task-clock"]
        task_clock.append(task["value"])
        # one thread: its CPU time in the region is at most the region's length
        assert task["value"] <= task["time_enabled_ns"] * 1.01 + 1e6
        assert task["time_enabled_ns"] <= point["context"]["precision"]["sampling_s"] * 1e9 * 1.01 + 1e6
        # the arrays were written before timing: the samples fault no page in
        assert counters["events"]["page-faults"]["value"] < 32 * 2**20 / 4096 / 100
    assert 0 < sum(task_clock) < process_cpu_ns


def test_hardware_events_agree_with_perf_on_this_host(records):
    counters = records("saxpy", "--size", "1m", "--strides", "1", *QUICK)[0]["context"]["counters"]
    check_counters(counters)
    perf_counts = hardware_counts()
    if perf_counts is None:
        pytest.skip("perf is not installed: nothing to compare the PMU's answer with")
    assert (counters["events"]["cycles"]["state"] == "counted") == perf_counts
    if not perf_counts:
        assert counters["events"]["cycles"]["state"] in {"not supported", "not permitted"}
        assert counters["events"]["cycles"]["reason"]


@pytest.mark.parametrize("kernel_args", [
    ("tlb", "--pages", "8,16"),
    ("affinity", "--placements", "pinned", "--workloads", "compute", "--threads", "2", "--repeats", "1"),
    ("smt", "--workloads", "compute", "--repeats", "1"),
], ids=["tlb", "affinity", "smt"])
def test_paired_and_team_kernels_carry_counters(run, kernel_args):
    result = run(*kernel_args, *QUICK)
    if result.returncode != 0 and "smt" == kernel_args[0]:
        pytest.skip(f"smt cannot run here: {result.stderr.strip().splitlines()[-1]}")
    assert result.returncode == 0, result.stderr
    points = parse_lines(result.stdout)
    assert points
    for point in points:
        check_counters(point["context"]["counters"])
        # what ingest will take
        assert _schema_problem(_POINT_VALIDATOR, point) is None
        assert _counters_problem(point["context"]["counters"]) is None


def test_team_counts_every_member_thread(records):
    """Members start after the counters open and inherit them: two busy threads count more CPU
    time than the region lasts would allow one thread (on a machine busy enough that they could
    not both run, the test says so rather than fail)."""
    with OtherLoad() as others:
        points = records("affinity", "--placements", "pinned", "--workloads", "compute", "--threads", "2",
                         "--repeats", "1", "--samples", "20", "--min-sample-ms", "2")
    counters = points[0]["context"]["counters"]
    assert all(point["context"]["counters"] == counters for point in points)  # one count per point
    task_ns = counters["events"]["task-clock"]["value"]
    region_ns = points[0]["context"]["precision"]["sampling_s"] * 1e9
    if task_ns <= region_ns and (others.cpus > 0.2 or os.getloadavg()[0] > (os.cpu_count() or 1) + 1):
        pytest.skip(f"other processes kept {others.cpus:.2f} CPUs busy (load average {os.getloadavg()[0]:.1f}): "
                    "the two members did not get two CPUs")
    assert task_ns > region_ns


def test_counters_switched_off_are_a_state_not_zeros(build):
    result = subprocess.run([str(build["binary"]), "saxpy", "--size", "1m", "--strides", "1", *QUICK],
                            capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, FLEETSCOPE_NO_COUNTERS="1"))
    assert result.returncode == 0, result.stderr
    counters = parse_lines(result.stdout)[0]["context"]["counters"]
    assert "FLEETSCOPE_NO_COUNTERS" in counters["reason"]
    assert {event["state"] for event in counters["events"].values()} == {"not counted"}
    assert all(event["value"] is None for event in counters["events"].values())
    assert counters["ipc"] is None
