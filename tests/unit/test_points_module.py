"""The kernels role's points module (plugins/modules/fleetscope_points.py, its logic in
plugins/module_utils/kernel_points.py): one experiment's processes in one task. Stand-in kernels (sh scripts
that behave as fleetscope-kernels does: the exit note under FLEETSCOPE_KERNELS_EXIT_NOTE=1, a re-queue line,
a crash) give every verdict a known answer; the module runs in a real ansible-playbook on this machine."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("kernel_points", PROJECT / "plugins/module_utils/kernel_points.py")
kernel_points = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kernel_points)
sys.path.insert(0, str(PROJECT / "plugins" / "filter"))
from experiments import (  # noqa: E402  (the role's filters, from their folder)
    batch_experiments, batch_records, experiment_segments, failure_summary, kernel_status)

# A stand-in kernel: logs its argv to calls.log, writes its output line, then behaves as its first argument says.
KERNEL = r"""#!/bin/sh
echo "$*" >> calls.log
mode=$1; shift
note() { [ "$FLEETSCOPE_KERNELS_EXIT_NOTE" = 1 ] && echo "fleetscope-kernels: exit $1" >&2; exit "$1"; }
case "$mode" in
  ok) echo '{"point": "ok"}'; note 0 ;;
  skip) echo "k: skipped: nt stores: no such instructions" >&2; note 0 ;;
  drift) case " $* " in *" --attempt 2 "*) note 0 ;; *) echo "k: re-queue: stopped at its cap while drifting" >&2; note 0 ;; esac ;;
  usage) echo "k: --size: not a number" >&2; note 2 ;;
  crash) echo "k: about to crash" >&2; kill -9 $$ ;;
  silent) exit 0 ;;
  bank)  # an adaptive process: reports its --bank-s seed plus the 0.25 s its own points left
    seed=0; prev=""; for a in "$@"; do [ "$prev" = "--bank-s" ] && seed=$a; prev=$a; done
    echo "fleetscope-kernels: bank left $(awk "BEGIN { printf \"%.6f\", $seed + 0.25 }") s" >&2; note 0 ;;
  bankdrift)  # an adaptive process whose only point drifted: it asks for a second attempt
    case " $* " in *" --attempt 2 "*) ;; *) echo "k: re-queue: stopped at its cap while drifting" >&2 ;; esac
    seed=0; prev=""; for a in "$@"; do [ "$prev" = "--bank-s" ] && seed=$a; prev=$a; done
    echo "fleetscope-kernels: bank left $(awk "BEGIN { printf \"%.6f\", $seed + 0.5 }") s" >&2; note 0 ;;
  bankcrash) echo "k: about to crash" >&2; kill -9 $$ ;;
esac
"""


def kernel(tmp_path: Path) -> str:
    path = tmp_path / "kernel.sh"
    path.write_text(KERNEL)
    path.chmod(0o755)
    return str(path)


def point(exe: str, mode: str, label: str | None = None, raw: str | None = None) -> dict:
    """A point as the filter perf_points makes them (a `raw` entry where perf stat wraps it; no perf here, the
    stand-in gets the CSV's path as an argument as perf stat gets it after -o), plus a key of the caller's."""
    entry = {"label": label or mode, "argv": [exe, mode], "raw": None, "kind": "P"}
    if raw:
        entry["argv"].append(raw)
        entry["raw"] = {"path": raw, "tool": "perf", "params": {"point": entry["label"], "point_index": 0}}
    return entry


def subprocess_runner(cwd: Path):
    """run(argv) as the module's runner does it, without Ansible: the unit under test is run_points' logic."""

    def run(argv):
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False,
                              env=dict(os.environ, FLEETSCOPE_KERNELS_EXIT_NOTE="1"))
        return {"rc": proc.returncode, "stdout": proc.stdout.rstrip("\n"), "stderr": proc.stderr.rstrip("\n")}

    return run


def test_every_point_runs_in_order_and_drifting_ones_once_more_after_all_the_others(tmp_path):
    exe = kernel(tmp_path)
    points = [point(exe, "drift", "a"), point(exe, "ok", "b"), point(exe, "skip", "c")]
    results, requeued, _ = kernel_points.run_points(subprocess_runner(tmp_path), points, ["--extra", "1"])
    assert [r["item"]["label"] for r in results] == ["a", "b", "c"]
    assert [r["failed"] for r in results] == [False, False, False]
    assert [r["item"]["label"] for r in requeued] == ["a (second attempt)"]
    assert requeued[0]["item"]["argv"] == [exe, "drift", "--attempt", "2"] and not requeued[0]["failed"]
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls == ["drift --extra 1", "ok --extra 1", "skip --extra 1", "drift --attempt 2 --extra 1"]


def test_a_failed_point_does_not_stop_the_others_and_no_second_attempt_runs(tmp_path):
    exe = kernel(tmp_path)
    points = [point(exe, "drift", "a"), point(exe, "crash", "b"), point(exe, "silent", "c"), point(exe, "usage", "d"),
              point(exe, "ok", "e")]
    results, requeued, _ = kernel_points.run_points(subprocess_runner(tmp_path), points)
    assert [kernel_status(r) for r in results] == [
        None, "killed by signal 9", "killed (no exit note from the kernel, though what ran it reported exit 0)",
        "exit 2", None]
    assert [r["failed"] for r in results] == [False, True, True, True, False]
    assert requeued == []
    assert len((tmp_path / "calls.log").read_text().splitlines()) == 5
    summary = failure_summary({"failed": True, "results": results, "requeued": requeued}).splitlines()
    assert summary[0] == "b: killed by signal 9: k: about to crash"
    assert summary[2] == "d: exit 2: k: --size: not a number | fleetscope-kernels: exit 2"


def test_requeue_off_runs_no_second_attempt(tmp_path):
    exe = kernel(tmp_path)
    results, requeued, _ = kernel_points.run_points(subprocess_runner(tmp_path), [point(exe, "drift")], requeue=False)
    assert not results[0]["failed"] and requeued == []


def adaptive_point(exe: str, mode: str, label: str) -> dict:
    return dict(point(exe, mode, label), argv=[exe, mode, "--target-ci", "0.01", "--max-point-seconds", "1"])


def test_an_experiments_unspent_time_passes_from_process_to_process(tmp_path):
    """The leftover an adaptive process reports seeds the next adaptive one (--bank-s), across a fixed-count
    process (no bank: neither seeded nor changing it) and on to the second attempts; a process that crashed
    passes nothing on (what it spent is unknown); what is left at the end is returned for the next call."""
    exe = kernel(tmp_path)
    points = [adaptive_point(exe, "bank", "a"), point(exe, "ok", "b"), adaptive_point(exe, "bank", "c"),
              adaptive_point(exe, "bankdrift", "d")]
    results, requeued, left = kernel_points.run_points(subprocess_runner(tmp_path), points, ["--x", "7"], bank_s=0.1)
    assert [r["failed"] for r in results + requeued] == [False] * 5
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls == ["bank --target-ci 0.01 --max-point-seconds 1 --bank-s 0.100000 --x 7",
                     "ok --x 7",
                     "bank --target-ci 0.01 --max-point-seconds 1 --bank-s 0.350000 --x 7",
                     "bankdrift --target-ci 0.01 --max-point-seconds 1 --bank-s 0.600000 --x 7",
                     "bankdrift --target-ci 0.01 --max-point-seconds 1 --attempt 2 --bank-s 1.100000 --x 7"]
    assert [r["item"] for r in results] == points  # the points themselves keep their own argv
    assert math.isclose(left, 1.6)
    assert [kernel_points.bank_left(r) for r in results] == [0.35, None, 0.6, 1.1]

    (tmp_path / "calls.log").unlink()
    points = [adaptive_point(exe, "bank", "a"), adaptive_point(exe, "bankcrash", "b"), adaptive_point(exe, "bank", "c")]
    results, requeued, left = kernel_points.run_points(subprocess_runner(tmp_path), points)
    assert [r["failed"] for r in results] == [False, True, False] and requeued == []
    calls = (tmp_path / "calls.log").read_text().splitlines()
    # no seed before anything was left; none after the crash
    assert calls == ["bank --target-ci 0.01 --max-point-seconds 1", "bankcrash --target-ci 0.01 --max-point-seconds 1 "
                     "--bank-s 0.250000", "bank --target-ci 0.01 --max-point-seconds 1"]
    assert math.isclose(left, 0.25)


def test_the_seed_is_rounded_down_and_a_report_is_read_only_from_a_process_that_succeeded():
    ok = {"rc": 0, "stderr": "chase: done\nfleetscope-kernels: bank left 1.500000 s\nfleetscope-kernels: exit 0"}
    assert kernel_points.bank_left(ok) == 1.5
    assert kernel_points.bank_left(dict(ok, rc=1)) is None
    assert kernel_points.bank_left({"rc": 0, "stderr": "fleetscope-kernels: bank left 1.5 s"}) is None  # no note
    assert kernel_points.bank_left({"rc": 0, "stderr": "fleetscope-kernels: bank left -1 s\n"
                                                       "fleetscope-kernels: exit 0"}) is None
    assert kernel_points.bank_left({"rc": 0, "stderr": "fleetscope-kernels: bank left 1e9 s\n"
                                                       "fleetscope-kernels: exit 0"}) is None
    seen = []
    kernel_points.run_points(lambda argv: seen.append(argv) or {"rc": 0, "stderr": "fleetscope-kernels: exit 0"},
                             [{"label": "a", "argv": ["k", "--target-ci", "0.01"], "raw": None}], bank_s=0.1234569)
    assert seen == [["k", "--target-ci", "0.01", "--bank-s", "0.123456"]]


PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Run the points module
      fleetscope.fleet.fleetscope_points: {arguments}
      register: measured
      ignore_errors: true
    - name: Keep what it returned
      ansible.builtin.copy:
        content: "{{{{ measured | to_json }}}}"
        dest: {out}
        mode: "0600"
"""


def run_points_module(tmp_path: Path, arguments: dict) -> dict:
    """The module under a real ansible-playbook with `arguments` (its result, failed or not)."""
    out = tmp_path / "out.json"
    book = tmp_path / "book.yml"
    (tmp_path / "raw").mkdir(exist_ok=True)
    book.write_text(PLAYBOOK.format(arguments=json.dumps({"chdir": str(tmp_path), **arguments}), out=out))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(book)], cwd=PROJECT, env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def run_module(tmp_path: Path, points: list[dict], extra: list[str] | None = None, append: bool = False,
               bank: float = 0.0) -> dict:
    return run_points_module(tmp_path, {"points": points, "extra_args": extra or [], "stderr_log": "raw/zq.stderr.log",
                                        "stderr_log_append": append, "bank_s": bank})


def test_the_module_under_ansible_returns_each_point_as_a_loop_would_and_makes_the_perf_folders(tmp_path):
    exe = kernel(tmp_path)
    points = [point(exe, "skip", "a", raw="raw/perf/zq/000.csv"), point(exe, "drift", "b", raw="raw/perf/zq/001.csv")]
    measured = run_module(tmp_path, points, ["--x", "7"])
    assert not measured.get("failed") and measured["changed"]
    assert [r["item"] for r in measured["results"]] == points  # each point comes back whole, extra keys too
    assert [r["rc"] for r in measured["results"]] == [0, 0]
    assert measured["results"][0]["stderr"] == "k: skipped: nt stores: no such instructions\nfleetscope-kernels: exit 0"
    assert measured["bank_s"] == 0.0  # no adaptive process: nothing was banked
    again = measured["requeued"]
    assert [r["item"]["label"] for r in again] == ["b (second attempt)"]
    assert again[0]["item"]["raw"]["path"] == "raw/perf/zq/001.attempt2.csv"
    assert again[0]["cmd"] == [exe, "drift", "raw/perf/zq/001.attempt2.csv", "--attempt", "2", "--x", "7"]
    folder = tmp_path / "raw" / "perf" / "zq"
    assert folder.is_dir() and (folder.stat().st_mode & 0o777) == 0o700
    # the stderr log as the role kept it: every process's stderr joined by newlines, a newline at the end
    log = tmp_path / "raw" / "zq.stderr.log"
    assert log.read_text() == "\n".join(r["stderr"] for r in measured["results"] + again) + "\n"
    assert (log.stat().st_mode & 0o777) == 0o600
    # a refinement round appends its processes' stderr
    run_module(tmp_path, [point(exe, "usage", "r")], append=True)
    assert log.read_text().endswith("fleetscope-kernels: exit 0\nk: --size: not a number\nfleetscope-kernels: exit 2\n")


def test_the_module_fails_naming_each_failed_point_and_keeps_every_record(tmp_path):
    exe = kernel(tmp_path)
    measured = run_module(tmp_path, [point(exe, "crash", "a"), point(exe, "ok", "b"),
                                     {"label": "c", "argv": [str(tmp_path / "missing")], "raw": None}])
    assert measured["failed"]
    assert measured["msg"] == "2 of 3 processes failed: a: killed by signal 9; c: exit 2"
    assert [r["failed"] for r in measured["results"]] == [True, False, True]
    assert measured["results"][2]["msg"].startswith("[Errno 2]")
    assert failure_summary(measured).splitlines()[0] == "a: killed by signal 9: k: about to crash"
    # the stderr log is written before the module fails: the injected crash's line is in the bundle
    assert "k: about to crash" in (tmp_path / "raw" / "zq.stderr.log").read_text()


def test_the_module_under_ansible_takes_and_returns_the_experiments_bank(tmp_path):
    """A refinement round's call starts with what the first pass left (bank_s) and returns what it leaves."""
    exe = kernel(tmp_path)
    measured = run_module(tmp_path, [adaptive_point(exe, "bank", "a"), adaptive_point(exe, "bank", "b")], bank=0.5)
    assert not measured.get("failed")
    assert [r["cmd"][-2:] for r in measured["results"]] == [["--bank-s", "0.500000"], ["--bank-s", "0.750000"]]
    assert math.isclose(measured["bank_s"], 1.0)
    refused = run_module(tmp_path, [adaptive_point(exe, "bank", "a")], bank=-1.0)
    assert refused["failed"] and "bank_s -1.0 is not a number of seconds" in refused["msg"]


def run_batch(tmp_path: Path, experiments: list[dict]) -> dict:
    return run_points_module(tmp_path, {"experiments": experiments})


# A host's plan as plugins/filter/plan.py makes it, cut to what the batch filters read.
PLAN = {"experiments": [
    {"name": "alpha", "notes": ["alpha: planned"], "cuts": [], "run": []},
    {"name": "beta", "notes": [], "cuts": ["beta: one try a point"], "run": []},
]}
SETTINGS = {"topology": {}, "per_core_kind": True, "per_core_kind_experiments": ["alpha"], "perf": {},
            "perf_events": ["task-clock"], "perf_stat": True}


def test_a_batch_runs_each_experiment_in_turn_records_a_failed_one_and_goes_on(tmp_path):
    """Several experiments in one module call (tasks/run_batch.yml): each with its own stderr log and second
    attempts; one whose point crashed is failed in its outcome with the message the module would have failed
    with, the next one still runs, and the call itself does not fail. batch_records then makes each one's
    manifest record as tasks/run_points.yml did."""
    exe = kernel(tmp_path)
    experiments = [
        {"name": "alpha", "stderr_log": "raw/alpha.stderr.log",
         "points": [point(exe, "skip", "a0", raw="raw/perf/alpha/000.csv"), point(exe, "crash", "a1")]},
        {"name": "beta", "stderr_log": "raw/beta.stderr.log",
         "points": [point(exe, "drift", "b0", raw="raw/perf/beta/000.csv"), point(exe, "skip", "b1")]},
    ]
    measured = run_batch(tmp_path, experiments)
    assert not measured.get("failed") and measured["changed"]
    alpha, beta = measured["experiments"]
    assert (alpha["name"], alpha["failed"], beta["name"], beta["failed"]) == ("alpha", True, "beta", False)
    assert alpha["msg"] == "1 of 2 processes failed: a1: killed by signal 9" and "msg" not in beta
    assert alpha["requeued"] == [] and [r["item"]["label"] for r in beta["requeued"]] == ["b0 (second attempt)"]
    assert alpha["start"] <= alpha["end"] <= beta["start"] <= beta["end"]
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert [call.split()[0] for call in calls] == ["skip", "crash", "drift", "skip", "drift"]
    assert "k: about to crash" in (tmp_path / "raw" / "alpha.stderr.log").read_text()
    assert (tmp_path / "raw" / "beta.stderr.log").read_text().count("fleetscope-kernels: exit 0") == 3
    assert (tmp_path / "raw" / "perf" / "beta").is_dir()

    records = batch_records(experiments, measured["experiments"], PLAN, SETTINGS, 0)
    assert [(r["name"], r["status"], r["file"]) for r in records] == [
        ("alpha", "failed", "results/alpha.jsonl"), ("beta", "ok", "results/beta.jsonl")]
    assert records[0]["error"] == "a1: killed by signal 9: k: about to crash" and records[1]["error"] is None
    assert records[0]["notes"] == ["alpha: planned", "nt stores: no such instructions"]
    assert records[1]["notes"] == ["beta: one try a point", "nt stores: no such instructions"]  # once, not per point
    assert [raw["path"] for raw in records[1]["raw"]] == ["raw/perf/beta/000.csv", "raw/perf/beta/000.attempt2.csv"]
    assert 0 <= records[0]["wall_s"] <= records[0]["wall_s"] + records[1]["wall_s"] < 60

    # the module call failed whole (the host went away): every experiment of the batch is failed with its summary
    lost = batch_records(experiments, None, PLAN, SETTINGS, 0, failure="host unreachable")
    assert [(r["status"], r["error"], r["wall_s"]) for r in lost] == [("failed", "host unreachable", 0.0)] * 2
    # check mode: the module did not run, nothing failed
    assert [r["status"] for r in batch_records(experiments, None, PLAN, SETTINGS, 0)] == ["ok", "ok"]


def test_a_batch_refuses_an_experiment_it_cannot_run_before_running_any(tmp_path):
    exe = kernel(tmp_path)
    measured = run_batch(tmp_path, [{"name": "alpha", "stderr_log": "raw/a.log", "points": [point(exe, "ok")]},
                                    {"name": "beta", "points": [point(exe, "ok")]}])
    assert measured["failed"] and "each experiment needs a name, a list of points and a stderr_log" in measured["msg"]
    assert not (tmp_path / "calls.log").exists()


def test_segments_keep_the_run_s_order_and_batch_each_run_of_experiments_without_tasks_of_their_own():
    registry = {"a": {}, "b": {}, "sweep": {"tasks": True}, "c": {"shuffle": False}, "aio": {"tasks": True}}
    segments = experiment_segments(["a", "b", "sweep", "c", "aio"], registry)
    assert segments == [{"file": "run_batch.yml", "experiment": None, "batch": ["a", "b"]},
                        {"file": "experiments/sweep.yml", "experiment": "sweep", "batch": ["sweep"]},
                        {"file": "run_batch.yml", "experiment": None, "batch": ["c"]},
                        {"file": "experiments/aio.yml", "experiment": "aio", "batch": ["aio"]}]
    assert experiment_segments([], registry) == []


def test_a_batch_s_points_are_the_plan_s_in_the_order_the_role_s_shuffle_gives_them():
    from ansible.plugins.filter.core import randomize_list  # the role's `shuffle` filter

    points = [{"label": f"p{index}", "argv": ["k", "--cpu", "0", "--size", str(index)]} for index in range(12)]
    plan = {"experiments": [{"name": "alpha", "run": points}, {"name": "beta", "run": points, "kinds": 1}]}
    topology = {"core_kinds": [{"kind": "P", "representative_cpu": 0, "cpus": "0-1"},
                               {"kind": "E", "representative_cpu": 2, "cpus": "2-3"}]}
    settings = dict(SETTINGS, topology=topology, per_core_kind_experiments=["alpha", "beta"])
    alpha, beta = batch_experiments(["alpha", "beta"], plan, {"alpha": {}, "beta": {"shuffle": False}}, "run1host",
                                    settings)
    shuffled = randomize_list(points, seed="run1hostalpha")
    assert shuffled != points
    # alpha: shuffled as `shuffle(seed=fleet_run_id ~ inventory_hostname ~ experiment)`, then once per core kind
    assert [p["label"] for p in alpha["points"]] == [f"{p['label']} on {kind} (CPU {cpu})"
                                                    for p in shuffled for kind, cpu in (("P", 0), ("E", 2))]
    assert alpha["stderr_log"] == "raw/alpha.stderr.log" and all(p["raw"] is None for p in alpha["points"])
    # beta: the plan's order, and one kind (the plan cut it to one: kinds 1)
    assert [p["label"] for p in beta["points"]] == [p["label"] for p in points]
    counted = batch_experiments(["alpha"], plan, {"alpha": {}}, "run1host",
                                dict(SETTINGS, perf={"capability": "software"}))[0]
    assert counted["points"][0]["argv"][:2] == ["perf", "stat"]
    assert counted["points"][0]["raw"]["path"] == "raw/perf/alpha/000.csv"
