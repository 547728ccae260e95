"""Filters of the CPU/OS/IO experiments: the aio plan (engines the kernel offers, the file cut to the free
space), the workloads role's processes and experiment record, and preflight's fleet_workloads check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins" / "filter"))

from cpu_io import aio_plan  # noqa: E402
from experiments import kernel_status  # noqa: E402
from workloads import (miss_event, record_points, report_problem, top_functions, workload_points,  # noqa: E402
                       workload_record)
from workloads_input import preflight_workload_problems  # noqa: E402

MIB = 1 << 20
PLAN = {"kernel": "aio", "engines": [
    {"engine": "blocking", "available": True, "reason": None},
    {"engine": "posix_aio", "available": True, "reason": None},
    {"engine": "io_uring", "available": False, "reason": "io_uring unavailable: the running kernel has no io_uring"}]}


def df(free_bytes, rc=0):
    return {"rc": rc, "stdout": f"      Avail\n{free_bytes}\n", "stderr": ""}


def test_aio_plan_leaves_out_an_unavailable_engine_with_the_kernel_s_reason():
    plan = aio_plan(PLAN, ["io_uring", "blocking", "posix_aio"], df(100 << 30), 256 * MIB, 512 * MIB, "/d", 4096)
    assert plan == {"engines": ["blocking", "posix_aio"], "size_bytes": 256 * MIB, "skip": False,
                    "notes": ["io_uring left out: io_uring unavailable: the running kernel has no io_uring"]}


def test_aio_plan_cuts_the_file_to_the_free_space_and_says_so():
    plan = aio_plan(PLAN, ["blocking"], df(700 * MIB + 123), 1 << 30, 512 * MIB, "/d", 4096)
    assert plan["size_bytes"] == 188 * MIB and not plan["skip"]
    assert "cut from 1 GiB to 188 MiB" in plan["notes"][0]


@pytest.mark.parametrize("engines, free, reason", [
    (["io_uring"], 100 << 30, "no requested I/O engine"),
    (["blocking"], 520 * MIB, "no room for a scratch file"),
])
def test_aio_plan_skips_with_a_reason(engines, free, reason):
    plan = aio_plan(PLAN, engines, df(free), 256 * MIB, 512 * MIB, "/d", 4096)
    assert plan["skip"] and reason in plan["notes"][-1]


def test_aio_plan_skips_when_the_free_space_cannot_be_read():
    plan = aio_plan(PLAN, ["blocking"], {"rc": 1, "stdout": "", "stderr": "df: /d: No such file or directory"},
                    256 * MIB, 512 * MIB, "/d", 4096)
    assert plan["skip"] and "No such file" in plan["notes"][-1]


def test_workload_points_pass_argv_lists_and_the_workload_s_own_settings():
    points = workload_points([{"name": "gz", "command": ["gzip", "-9", "a b.txt"]},
                              {"name": "mk", "command": ["make", "-j", 4], "repeats": 3, "timeout_s": 60,
                               "chdir": "/src"}], "/k/bin", "/b/results/workloads.jsonl", 1, 600)
    assert points[0]["argv"] == ["/k/bin", "workload", "--name", "gz", "--samples", "1", "--timeout-s", "600",
                                 "--experiment", "workloads", "--output", "/b/results/workloads.jsonl", "--",
                                 "gzip", "-9", "a b.txt"]
    assert points[1]["argv"][4:9] == ["--samples", "3", "--timeout-s", "60", "--chdir"]
    assert points[1]["argv"][-3:] == ["make", "-j", "4"]
    assert points[1]["record_argv"][-6:] == ["--output", "/dev/null", "--", "make", "-j", "4"]


def test_the_record_fails_on_a_failed_command_and_keeps_the_others():
    raw = {"path": "raw/perf/workloads/000.csv", "tool": "perf", "params": {"point": "ok1", "point_index": 0}}
    runs = [{"item": {"label": "ok1", "raw": raw}, "rc": 0, "stderr": "workload: ok1 run 1/1: 1 s wall"},
            {"item": {"label": "bad", "raw": dict(raw, path="raw/perf/workloads/001.csv")}, "rc": 5,
             "stderr": "oops\nfleetscope-kernels workload: workload 'bad' failed: 'sh' exited with status 3 (run 1 of 1)"}]
    point = {"label": "ok1", "kind": "time", "event": "cpu-clock"}
    report = {"rc": 0, "stdout": "    60.70%  gzip   [.] deflate_slow   -   -\n     9.10%  libc.so.6  [.] memcpy\n",
              "item": {"item": point}}
    record = workload_record(runs, [{"rc": 0, "item": point}], [report],
                             {"capability": "software", "reason": "no PMU"}, True, 5, 0,
                             miss={"event": None, "note": "not supported: counter tier software (no PMU)"})
    assert record["status"] == "failed" and record["file"] == "results/workloads.jsonl"
    assert record["error"].startswith("bad: exit 5: oops | fleetscope-kernels workload: workload 'bad' failed")
    assert [entry["params"].get("status") for entry in record["raw"]] == ["ok", "failed", None]
    assert record["raw"][1]["params"]["failure"] == "workload 'bad' failed: 'sh' exited with status 3 (run 1 of 1)"
    assert record["notes"][0].startswith("counter tier: software (no PMU)")
    assert record["notes"][1] == "miss profile: not supported: counter tier software (no PMU)"
    assert record["notes"][2] == "ok1: top functions (perf record, cpu-clock): 60.7% deflate_slow (gzip); 9.1% memcpy (libc.so.6)"
    # the profile goes into the manifest for the warehouse, with why there is no miss profile beside it
    assert record["raw"][2] == {"path": "raw/workloads/ok1.time.perf-report.txt", "tool": "perf_report",
                                "params": {"workload": "ok1", "profile": "time", "event": "cpu-clock", "reference": False,
                                           "miss_note": "not supported: counter tier software (no PMU)"}}


def test_a_workload_whose_kernel_wrote_no_exit_note_failed_whatever_perf_returned():
    """perf stat can report a kernel that died at once as exit 0: the kernel's exit note decides."""
    runs = [{"item": {"label": "ok1"}, "rc": 0, "stderr": "workload: ok1 run 1/1: 1 s wall\nfleetscope-kernels: exit 0"},
            {"item": {"label": "died"}, "rc": 0, "stderr": "workload: died run 1/1"},
            {"item": {"label": "lost"}, "rc": 0, "stderr": "fleetscope-kernels workload: 'nope' not found\n"
                                                          "fleetscope-kernels: exit 5"}]
    record = workload_record(runs, [], [], {"capability": "software", "reason": "no PMU"}, False, 5, 0,
                             statuses=[kernel_status(run) for run in runs])
    assert record["status"] == "failed"
    assert record["error"].splitlines() == [
        "died: killed (no exit note from the kernel, though what ran it reported exit 0): workload: died run 1/1",
        "lost: exit 5: fleetscope-kernels workload: 'nope' not found | fleetscope-kernels: exit 5"]


def test_the_reference_workload_samples_at_its_own_rate_and_is_marked():
    (point,) = workload_points([{"name": "reference_alloc_walk", "command": ["/k/bin", "alloc_walk"], "reference": True,
                                 "record_frequency": "3999", "timeout_s": "60"}], "/k/bin", "/b/w.jsonl", 1, 600, 499)
    assert point["reference"] is True and point["record_frequency"] == 3999
    assert point["argv"][6:8] == ["--timeout-s", "60"]


def test_the_miss_event_is_the_first_the_pmu_counts_or_none_with_the_reason():
    candidates = ["cache-misses", "LLC-load-misses", "L1-dcache-load-misses"]
    hardware = {"capability": "hardware", "reason": "cycles counted"}
    probe = {"stderr": "<not supported>,,cache-misses,0,100.00,,\n1234,,LLC-load-misses,5000,100.00,,\n"
                       "0,,L1-dcache-load-misses,5000,100.00,,\n"}
    assert miss_event(probe, hardware, candidates) == {"event": "LLC-load-misses", "note": None}
    none = miss_event({"stderr": "<not supported>,,cache-misses,0,100.00,,\n"}, hardware, candidates)
    assert none["event"] is None and none["note"].startswith("not supported: the PMU samples none") \
        and "cache-misses not supported" in none["note"] and "LLC-load-misses not reported" in none["note"]
    software = miss_event({}, {"capability": "software", "reason": "a VM without a virtual PMU"}, candidates)
    assert software == {"event": None, "note": "not supported: counter tier software (a VM without a virtual PMU); no "
                                                "miss event can be sampled here"}


def test_perf_record_runs_by_time_and_by_misses_only_for_workloads_that_ran():
    runs = [{"rc": 0, "item": {"label": "ref", "record_argv": ["/k", "workload"], "record_frequency": 3999,
                               "reference": True}},
            {"rc": 5, "item": {"label": "bad", "record_argv": ["/k"], "record_frequency": 499}}]
    points = record_points(runs, {"capability": "hardware"}, {"event": "cache-misses"}, "/s")
    assert [(p["label"], p["kind"], p["event"]) for p in points] == [("ref", "time", "cycles"),
                                                                      ("ref", "misses", "cache-misses")]
    assert points[1]["argv"] == ["perf", "record", "-q", "-e", "cache-misses", "-F", "3999", "-o",
                                 "/s/ref.misses.perf.data", "--", "/k", "workload"]
    software = record_points(runs, {"capability": "software"}, {"event": None, "note": "x"}, "/s")
    assert [(p["kind"], p["event"]) for p in software] == [("time", "cpu-clock")]
    assert record_points(runs, {"capability": "none"}, None, "/s") == []


def test_a_report_with_a_line_the_parser_cannot_read_is_not_named_for_the_warehouse():
    assert report_problem("# Samples: 3 of event 'cycles'\n    60.00%   2  app  [.] walk\n\n") is None
    assert report_problem("    60.00%  app  [.] walk\nWarning: lost samples\n").startswith("line 2")


def test_top_functions_reads_perf_report_lines():
    report = "    15.79%  libc.so.6         [.] __strcmp_avx2                 -      -\n" \
             "     4.17%  dash              [.] 0x0000000000009fa2            -      -\n\n# comment\n"
    assert top_functions(report, 1) == [(15.79, "libc.so.6", "__strcmp_avx2")]


@pytest.mark.parametrize("workloads, says", [
    ("gzip -9 file", "must be a list"),
    ([{"name": "gz", "command": "gzip -9 file"}], "fleet_workloads[0] (gz).command is one string"),
    ([{"name": "gz"}], "fleet_workloads[0] (gz).command is missing"),
    ([{"name": "reference_alloc_walk", "command": ["true"]}], "is the reference workload's own name"),
    ([{"name": "gz", "command": []}], "is missing or empty"),
    ([{"name": "has space", "command": ["true"]}], "fleet_workloads[0].name='has space'"),
    ([{"command": ["true"]}], "fleet_workloads[0].name=None"),
    ([{"name": "a", "command": ["true"]}, {"name": "a", "command": ["false"]}], "fleet_workloads[1] (a): the name a is used twice"),
    ([{"name": "a", "command": ["true"], "repeats": 0}], "fleet_workloads[0] (a).repeats=0"),
    ([{"name": "a", "command": ["true"], "timeout_s": "soon"}], "timeout_s='soon'"),
    ([{"name": "a", "command": ["true"], "shell": True}], "takes only name, command"),
    (["gzip"], "fleet_workloads[0] is 'gzip'"),
])
def test_preflight_names_the_workload_entry_and_what_to_write(workloads, says):
    problems = preflight_workload_problems(workloads)
    assert any(says in problem for problem in problems), problems


def test_preflight_accepts_good_workloads():
    assert preflight_workload_problems([]) == []
    assert preflight_workload_problems([{"name": "gzip-9.v2", "command": ["gzip", "-9", 3], "repeats": 3,
                                         "timeout_s": "60", "chdir": "/tmp"}]) == []


@pytest.mark.parametrize("line", ["  1.0%  libc.so.6  [.] x" + " " * 40_000 + "y",
                                  "  1.0%  libc.so.6  [.] x" + " -" * 20_000 + " y"])
def test_a_perf_report_line_from_the_host_is_read_in_linear_time(line):
    """The symbol was lazy before optional blanks and dashes: a line of 40 000 blanks took seconds (issue 27's
    class: every pattern over a host's text)."""
    import time
    start = time.process_time()
    assert top_functions(line + "\n", 1)[0][:2] == (1.0, "libc.so.6")
    assert time.process_time() - start < 0.5
