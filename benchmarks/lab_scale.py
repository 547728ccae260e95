#!/usr/bin/env python3
"""How the controller's side of site.yml scales with the lab: a light run (facts, tuning, one small
experiment, restore, collect, warehouse, report) over 1, 8 and 32 lab hosts of tests/lab (network
namespaces with their own sshd on this machine; root needed), then the same run at one size with
half the forks, with `strategy: free` and without pipelining.

    flock /work/locks/machine.lock .venv/bin/python benchmarks/lab_scale.py \\
        [--sizes 1,8,32] [--variants-at 8] [--variants forks,free,no-pipelining,paced,poll-1ms,ssh-compression]
        [--tags zero_queue] [--budget-s 540]

The lab is started once with the largest size and each run takes its hosts with --limit (fslab1..N
plus localhost, the controller's plays). Every line ansible-playbook prints is timestamped as it
arrives; the PLAY and TASK headers (linear strategy: a task's header comes when it starts on every
host) split the run's wall time into stages: preflight, facts, tune, build, experiment, restore,
collect, warehouse, report. Per run it reports each stage's wall time and per host, the peak memory
of the controller (the RSS of ansible-playbook and every process under it, summed, sampled every
0.2 s; and their USS, each process's own pages, summed once a second: the RSS sum counts the pages a
fork shares with ansible-playbook once per fork) and the number of its processes, its CPU time in three
parts (CPU_PARTS: ansible-playbook's own; its forks with every process they waited for, ssh clients and
the controller's own tasks; the ssh ControlPersist masters), and each host's own span
(runs.started_at..finished_at).
A run that would start past --budget-s is skipped and said so; the lab is stopped whatever happens.
ansible-playbook runs as `make run` runs it, with Python's compiled modules kept (PYTHONDONTWRITEBYTECODE cleared).

Targets (issue 33): controller CPU per added host <= 1 s ((CPU at the largest size - CPU at the smallest) /
added hosts). The variants undo one of ansible.cfg's settings each: `poll-1ms` Ansible's default
internal_poll_interval, `ssh-compression` Ansible's default ssh_args (with -C).

Targets (issue 19): controller overhead per added host <= 1 s of wall time at 32 hosts with the shipped
defaults ((wall at 32 - wall at 1) / 31), and ingest + report of the 32 bundles <= 30 s. All lab hosts
share this machine's CPUs: on a 2-vCPU guest each host's compile and experiment run one after another in
effect, so the per-host figure is also given without the build and experiment stages (the hosts' own
work, not the controller's).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lab"))

from lab import PROJECT, Lab, LabRun, stop  # noqa: E402  (tests/lab is not a package)

STAGES = ("preflight", "facts", "tune", "build", "experiment", "restore", "collect", "warehouse", "report")
HOST_WORK = ("build", "experiment")
OVERHEAD_TARGET_S, LOAD_TARGET_S = 1.0, 30.0
# The experiment's DRAM working set: the lab's hosts share this machine's memory.
DRAM_BYTES = 32 * 2**20


BUILD_TASK = "kernels : Unpack and compile the kernel suite"  # roles/kernels/tasks/build.yml
# The controller's CPU in three parts: ansible-playbook's own (its strategy queueing tasks and polling the forks,
# the tasks' variables, their results), its forks and everything they waited for (templating a task's arguments,
# building the module, the ssh clients, the controller's own tasks: ingest and report), and the ssh masters.
CPU_PARTS = {"own": "ansible-playbook's own", "forks": "its forks and what they ran", "masters": "ssh masters"}


def stage_of(header: str, current: str) -> str:
    """The stage a PLAY or TASK header starts (site.yml's plays, and in the measure play the kernels' build task)."""
    play = re.match(r"PLAY \[(.*)\]", header)
    if play:
        name = play.group(1)
        for prefix, stage in (("Preflight", "preflight"), ("Facts", "facts"), ("Measure - record", "collect"),
                              ("Measure", current if current in STAGES[2:7] else "tune"),
                              ("Warehouse", "warehouse"), ("Report", "report")):
            if name.startswith(prefix):
                return stage
        return current
    task = re.match(r"TASK \[(.*)\]", header).group(1)
    # the measure play's tune stage starts with it (above); the build is one task, and what follows it characterizes
    if current == "tune" and task.startswith(BUILD_TASK):
        return "build"
    if current == "build" and not task.startswith(BUILD_TASK):
        return "experiment"
    if current == "experiment" and task.startswith("tuning : "):
        return "restore"
    if current in ("experiment", "restore") and task.startswith("collect : "):
        return "collect"
    return current


def ssh_masters() -> dict[int, float]:
    """CPU seconds so far of each ssh ControlPersist master (`ssh: ... [mux]`): they leave ansible's process
    tree when they start, so its wait4 does not count the encryption they do for it."""
    found = {}
    for process in psutil.process_iter(["name", "cmdline", "cpu_times"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if cmdline.startswith("ssh: ") and "[mux]" in cmdline and process.info["cpu_times"]:
            found[process.pid] = process.info["cpu_times"].user + process.info["cpu_times"].system
    return found


class Memory:
    """Peak summed RSS of a process and its descendants, sampled in a thread, their peak summed USS (each
    process's own pages: a fork's RSS counts every page it still shares with ansible-playbook, so the RSS sum
    counts those pages once per fork), the CPU seconds the ssh masters spent meanwhile and the process's own CPU
    seconds (its last sample, at most 0.2 s before it exits: what it spent itself, apart from what it waited for)."""

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self.own_cpu_s = 0.0
        self.peak_mb = self.peak_uss_mb = 0.0
        self.peak_processes = 0
        self.masters_before = ssh_masters()
        self.masters: dict[int, float] = {}
        self.samples = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        while not self.done.wait(0.2):
            try:
                processes = [self.root, *self.root.children(recursive=True)]
                times = self.root.cpu_times()
            except psutil.Error:
                continue
            self.own_cpu_s = times.user + times.system
            self.peak_mb = max(self.peak_mb, _summed(processes, lambda process: process.memory_info().rss) / 2**20)
            self.peak_processes = max(self.peak_processes, len(processes))
            self.samples += 1
            if self.samples % 5 == 0:  # a walk over every process (and its smaps, for USS): once a second
                self.masters.update(ssh_masters())
                uss = _summed(processes, lambda process: process.memory_full_info().uss)
                self.peak_uss_mb = max(self.peak_uss_mb, uss / 2**20)

    def masters_cpu_s(self) -> float:
        return sum(seconds - self.masters_before.get(pid, 0.0) for pid, seconds in self.masters.items())

    def stop(self) -> None:
        self.done.set()
        self.thread.join()
        self.masters.update(ssh_masters())


def _summed(processes: list[psutil.Process], measure: Callable[[psutil.Process], int]) -> int:
    """`measure` (bytes) summed over the processes still there to measure."""
    total = 0
    for process in processes:
        try:
            total += measure(process)
        except psutil.Error:
            continue
    return total


def timed_run(lab: Lab, workdir: Path, hosts: int, tags: str, env: dict[str, str]) -> dict:
    run = LabRun(workdir, lab.inventory)
    limit = ",".join([*(host.name for host in lab.hosts[:hosts]), "localhost"])
    argv = run.argv("site.yml", "--tags", tags, "--limit", limit, "-e", f"kernels_dram_bytes={DRAM_BYTES}")
    started = time.monotonic()
    # as `make run` runs it (the Makefile clears PYTHONDONTWRITEBYTECODE): where the caller's environment sets it and
    # the checkout has no compiled filter plugins yet, every fork compiled each filter plugin its templates use from
    # source, a fifth of the controller's CPU in a 4-host run
    environment = {name: value for name, value in {**run.env(), **env}.items() if name != "PYTHONDONTWRITEBYTECODE"}
    process = subprocess.Popen(argv, cwd=PROJECT, env=environment, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    memory = Memory(process.pid)
    stage, since, times, output = "preflight", started, dict.fromkeys(STAGES, 0.0), []
    for line in process.stdout:
        output.append(line)
        if line.startswith(("PLAY [", "TASK [")):
            now = time.monotonic()
            following = stage_of(line, stage)
            if following != stage:
                times[stage] += now - since
                stage, since = following, now
    _, status, usage = os.wait4(process.pid, 0)  # with every process it waited for: the controller's CPU
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    times[stage] += wall - (since - started)
    memory.stop()
    run.keep_log("site.yml", "".join(output))
    if process.returncode != 0:
        raise SystemExit(f"site.yml over {hosts} hosts failed ({process.returncode}):\n{''.join(output)[-3000:]}")
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        spans = [span for (span,) in db.execute(
            "SELECT epoch(finished_at) - epoch(started_at) FROM runs WHERE host LIKE 'fslab%'").fetchall()]
    if len(spans) != hosts:
        raise SystemExit(f"expected {hosts} bundles in the warehouse, found {len(spans)}")
    waited = usage.ru_utime + usage.ru_stime  # ansible-playbook and every process it and its forks waited for
    cpu = {"own": memory.own_cpu_s, "forks": waited - memory.own_cpu_s, "masters": memory.masters_cpu_s()}
    return {"hosts": hosts, "wall_s": wall, "stages": times, "rss_mb": memory.peak_mb, "uss_mb": memory.peak_uss_mb,
            "cpu_s": sum(cpu.values()), "cpu": cpu,
            "processes": memory.peak_processes, "host_span_s": statistics.median(spans), "env": env}


def row(label: str, result: dict) -> str:
    stages = " | ".join(f"{result['stages'][stage]:.1f}" for stage in STAGES)
    parts = " / ".join(f"{result['cpu'][part]:.1f}" for part in CPU_PARTS)
    return (f"| {label} | {result['hosts']} | {result['wall_s']:.1f} | {stages} | "
            f"{result['rss_mb']:.0f} / {result['uss_mb']:.0f} MB / {result['processes']} | {result['cpu_s']:.1f} "
            f"({parts}) | {result['host_span_s']:.1f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,8,32", help="lab sizes (default 1,8,32)")
    parser.add_argument("--variants-at", type=int, default=8,
                        help="size of the forks / strategy / pipelining runs (0: none; default 8)")
    parser.add_argument("--variants", default="forks,free,no-pipelining",
                        help="which variants run at --variants-at: forks, free, no-pipelining, paced, poll-1ms, "
                             "ssh-compression")
    parser.add_argument("--tags", default="zero_queue", help="the experiment(s) run (default zero_queue)")
    parser.add_argument("--budget-s", type=float, default=540, help="start no run after this many seconds")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    known = {"forks": (f"forks {max(args.variants_at // 2, 1)}", {"ANSIBLE_FORKS": str(max(args.variants_at // 2, 1))}),
             "free": ("strategy free", {"ANSIBLE_STRATEGY": "free"}),
             "no-pipelining": ("no pipelining", {"ANSIBLE_PIPELINING": "False"}),
             "paced": ("strategy paced", {"ANSIBLE_STRATEGY": "fleetscope.fleet.paced"}),
             "poll-1ms": ("internal poll 1 ms", {"ANSIBLE_INTERNAL_POLL_INTERVAL": "0.001"}),
             "ssh-compression": ("ssh -C", {"ANSIBLE_SSH_ARGS": "-C -o ControlMaster=auto -o ControlPersist=60s"})}
    unknown = set(args.variants.split(",")) - set(known) - {""}
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(sorted(unknown))}; known: {', '.join(known)}")
    variants = dict(known[name] for name in args.variants.split(",") if name) if args.variants_at else {}
    began = time.monotonic()
    lab = Lab(max(sizes + [args.variants_at])).start()
    print(f"lab of {len(lab.hosts)} hosts started in {time.monotonic() - began:.1f} s; load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    results, skipped = [], []
    try:
        with tempfile.TemporaryDirectory(prefix="fleetscope-lab-scale-") as tmp:
            plan = [("defaults", size, {}) for size in sizes] + \
                   [(name, args.variants_at, env) for name, env in variants.items()]
            for index, (label, hosts, env) in enumerate(plan):
                if time.monotonic() - began > args.budget_s:
                    skipped.append(f"{label} at {hosts} hosts")
                    continue
                result = timed_run(lab, Path(tmp) / f"{index:02d}", hosts, args.tags, env)
                results.append((label, result))
                print(f"{label}, {hosts} hosts: {result['wall_s']:.1f} s; load average {os.getloadavg()[0]:.1f}",
                      flush=True)
    finally:
        stop()
    print(f"\n## site.yml --tags {args.tags} (quick profile, DRAM working set {DRAM_BYTES >> 20} MiB), wall s")
    print("| run | hosts | wall | " + " | ".join(STAGES) + " | controller peak RSS / USS / processes | controller "
          f"CPU s ({' / '.join(CPU_PARTS.values())}) | median host span |")
    print("|" + "---|" * (6 + len(STAGES)))
    for label, result in results:
        print(row(label, result))
    defaults = {result["hosts"]: result for label, result in results if label == "defaults"}
    if len(defaults) >= 2:
        small, large = defaults[min(defaults)], defaults[max(defaults)]
        added = large["hosts"] - small["hosts"]
        per_host = (large["wall_s"] - small["wall_s"]) / added
        controller = sum(large["stages"][s] - small["stages"][s] for s in STAGES if s not in HOST_WORK) / added
        load = large["stages"]["warehouse"] + large["stages"]["report"]
        cpu = (large["cpu_s"] - small["cpu_s"]) / added
        parts = ", ".join(f"{(large['cpu'][part] - small['cpu'][part]) / added:.2f} s {name}"
                          for part, name in CPU_PARTS.items())
        print(f"\ncontroller CPU per added host: {cpu:.2f} s ({parts}; the hosts' sshd and modules are not under "
              "it): the wall time an added host costs a controller whose cores are its own, spread over its cores")
        print(f"\nper added host from {small['hosts']} to {large['hosts']}: {per_host:.2f} s of wall time "
              f"({controller:.2f} s without build and experiment); target <= {OVERHEAD_TARGET_S:g} s: "
              f"{'met' if per_host <= OVERHEAD_TARGET_S else 'MISSED'} (without the hosts' own work: "
              f"{'met' if controller <= OVERHEAD_TARGET_S else 'MISSED'})")
        print(f"ingest + report of {large['hosts']} bundles: {load:.1f} s; target <= {LOAD_TARGET_S:g} s: "
              f"{'met' if load <= LOAD_TARGET_S else 'MISSED'}")
    for label in skipped:
        print(f"not run (past --budget-s {args.budget_s:g} s): {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
