#!/usr/bin/env python3
"""Peak FLOP/s of our `peak_flops` kernel against likwid-bench's `peakflops_*` kernels, and our clock against
an independent reading of it, in one run.

Usage: benchmarks/peak_vs_likwid.py [--threads 1,2] [--repeats 5] [--pairs fma256:peakflops_avx_fma,...]

FLOP/s: each pair is one of our classes and precisions beside likwid-bench's test of the same vector width and
precision (Debian's likwid 5.2: `apt-get install likwid`; not a test dependency), at the same thread count,
one thread per CPU (`-W N:32kB:T`, CPUs 0..T-1, as `--cpus 0..T-1` for ours). Our kernel reports FLOP per ns of
each thread's own CPU time; likwid-bench times its run with a wall clock, so it runs with a fixed iteration
count (`-i`, no calibration runs) inside `perf stat -e task-clock`, and its FLOP over its threads' CPU time is
set beside ours: on a machine other work shares, wall-clock figures say how busy it was, not what the core
does (both tools' wall figures are printed too: ours as figure x the share of its windows it ran). Each repeat
runs likwid-bench and ours back to back for every pair and thread count, so they share the machine's state; the
best of the repeats of each is compared (interruptions only lower a rate), and the median per-repeat ratio too.

Clock: our core_clock (scalar_int, one core) against the L1 load-to-use latency: a 16 KiB pointer chase
(`chase`) timed in ns times the clock is the latency in cycles, 4 on Zen and on Intel cores since Sandy Bridge
for a plain pointer load, 5 where the address needs an index. Where the PMU counts cycles, `perf stat -e
cycles` over a core_clock run is set beside it; a VM without a virtual PMU says `<not supported>`.

Run it under the machine lock: `flock /work/locks/machine.lock benchmarks/peak_vs_likwid.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
KERNELS = PROJECT / "kernels" / "build" / "fleetscope-kernels"
# (our class, precision) -> likwid-bench test of the same width and precision
PAIRS = {("fma256", "fp64"): "peakflops_avx_fma", ("fma512", "fp64"): "peakflops_avx512_fma",
         ("fma256", "fp32"): "peakflops_sp_avx_fma", ("fma512", "fp32"): "peakflops_sp_avx512_fma",
         ("sse2", "fp64"): "peakflops_sse"}


def build() -> None:
    subprocess.run(["make", "-s", "-C", str(PROJECT / "kernels")], check=True)


def likwid(test: str, threads: int, iterations: int) -> dict:
    """likwid-bench's `test` on `threads` threads with a fixed iteration count (no calibration runs), inside
    `perf stat -e task-clock`: its own wall-clock GFLOP/s, and its FLOP over the CPU time its threads ran
    (task-clock / threads: the same normalisation as ours; the process's set-up is in it, which only lowers
    likwid's figure by a little)."""
    result = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "likwid-bench", "-t", test, "-W",
                             f"N:32kB:{threads}", "-i", str(iterations)], capture_output=True, text=True, timeout=300)
    rate = re.search(r"^MFlops/s:\s+([0-9.]+)", result.stdout, re.M)
    flops = re.search(r"^Number of Flops:\s+([0-9]+)", result.stdout, re.M)
    task = re.search(r"^([0-9.]+),msec,task-clock", result.stderr, re.M)
    if result.returncode != 0 or not (rate and flops and task):
        raise SystemExit(f"likwid-bench -t {test} failed: {result.stdout[-400:]}{result.stderr[-400:]}")
    cpu_s = float(task.group(1)) / 1000 / threads
    return {"wall": float(rate.group(1)) / 1000, "cpu": int(flops.group(1)) / cpu_s / 1e9}


def ours(name: str, precision: str, threads: int, windows: int, window_ms: int) -> dict:
    cpus = ",".join(str(cpu) for cpu in range(threads))
    result = subprocess.run([str(KERNELS), "peak_flops", "--classes", name, "--precisions", precision, "--threads",
                             str(threads), "--cpus", cpus, "--samples", str(windows), "--min-sample-ms",
                             str(window_ms)], capture_output=True, text=True, timeout=300, check=True)
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    context = record["context"]
    return {"gflop_s": record["summary"]["median"], "best": max(record["samples"]),
            "share": context["median_cpu_share"], "per_cycle": context["flop_per_cycle_per_core"],
            "clock": context["clock_ghz"]}


def clock_and_l1(repeats: int) -> list[dict]:
    """Per repeat: our one-core integer clock and the L1 chase's ns, and their product in cycles."""
    rows = []
    for _ in range(repeats):
        clock = subprocess.run([str(KERNELS), "core_clock", "--classes", "scalar_int", "--active", "1", "--cpus", "0",
                                "--ramp-repeats", "0", "--samples", "11", "--min-sample-ms", "20"],
                               capture_output=True, text=True, timeout=300, check=True)
        (point,) = [json.loads(line) for line in clock.stdout.splitlines()]
        # many short samples: the fastest is one no other process interrupted (the chase is wall-clock timed)
        chase = subprocess.run([str(KERNELS), "chase", "--sizes", "16k", "--cpu", "0", "--samples", "101",
                                "--min-sample-ms", "2"], capture_output=True, text=True, timeout=300, check=True)
        ns = min(json.loads(line)["summary"]["min"] for line in chase.stdout.splitlines())
        ghz = max(point["samples"])
        rows.append({"ghz": ghz, "share": point["context"]["min_cpu_share"], "l1_ns": ns, "cycles": ns * ghz})
    return rows


def perf_cycles() -> str:
    """perf stat's cycles over a one-core core_clock run, beside the clock it reports; or why there is none."""
    if not shutil.which("perf"):
        return "perf is not installed"
    result = subprocess.run(["perf", "stat", "-x,", "-e", "cycles,task-clock", str(KERNELS), "core_clock", "--classes",
                             "scalar_int", "--active", "1", "--cpus", "0", "--ramp-repeats", "0", "--samples", "11",
                             "--min-sample-ms", "20"], capture_output=True, text=True, timeout=300)
    lines = {line.split(",")[2]: line.split(",")[0] for line in result.stderr.splitlines() if line.count(",") >= 3}
    cycles, task_ms = lines.get("cycles"), lines.get("task-clock")
    if not cycles or not cycles.replace(".", "").isdigit():
        return f"perf stat cycles: {cycles or 'no line'} (no PMU counts cycles here)"
    ghz = max(json.loads(line)["summary"]["median"] for line in result.stdout.splitlines())
    return (f"perf stat: {float(cycles) / (float(task_ms) * 1e6):.3f} GHz (cycles / task-clock over the whole "
            f"process) vs core_clock {ghz:.3f} GHz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--windows", type=int, default=11)
    parser.add_argument("--window-ms", type=int, default=50)
    parser.add_argument("--pairs", default="fma256:fp64,fma512:fp64,fma256:fp32,fma512:fp32")
    parser.add_argument("--likwid-iterations", type=int, default=400000,
                        help="likwid-bench -i: iterations per thread (400000: about 0.8 s at 58 GFLOP/s)")
    args = parser.parse_args()
    if not shutil.which("likwid-bench"):
        raise SystemExit("likwid-bench is not installed: apt-get install likwid")
    build()
    threads = [int(value) for value in args.threads.split(",")]
    if max(threads) > len(os.sched_getaffinity(0)):
        raise SystemExit(f"--threads {args.threads}: this machine has {len(os.sched_getaffinity(0))} CPUs")
    pairs = [tuple(pair.split(":")) for pair in args.pairs.split(",")]
    print(f"load average before: {os.getloadavg()}", flush=True)
    runs: dict[tuple, dict[str, list]] = {}
    for repeat in range(args.repeats):
        for name, precision in pairs:
            for count in threads:
                entry = runs.setdefault((name, precision, count), {"likwid": [], "ours": []})
                entry["likwid"].append(likwid(PAIRS[(name, precision)], count, args.likwid_iterations))
                entry["ours"].append(ours(name, precision, count, args.windows, args.window_ms))
        print(f"repeat {repeat + 1}/{args.repeats} done, load average {os.getloadavg()[0]:.2f}", flush=True)
    print("\nper CPU second (both tools' FLOP over the CPU time their threads ran), best of the repeats;"
          " wall-clock figures, which the machine's other work lowers, after the bar")
    print("class    precision threads | likwid test              likwid   ours  ours/likwid  (median ratio)"
          " FLOP/cycle  clock | wall: likwid  ours x share")
    for (name, precision, count), entry in runs.items():
        likwid_cpu = max(run["cpu"] for run in entry["likwid"])
        ours_best = max(run["best"] for run in entry["ours"])
        ratios = [o["gflop_s"] / l["cpu"] for o, l in zip(entry["ours"], entry["likwid"])]
        best = max(entry["ours"], key=lambda run: run["best"])
        print(f"{name:8s} {precision:9s} {count:7d} | {PAIRS[(name, precision)]:22s} {likwid_cpu:7.2f} {ours_best:7.2f}"
              f" {ours_best / likwid_cpu:8.3f}     ({statistics.median(ratios):.3f}) {best['per_cycle']:10.2f}"
              f" {best['clock']:6.3f} | {max(run['wall'] for run in entry['likwid']):11.2f}"
              f" {max(run['best'] * run['share'] for run in entry['ours']):10.2f}")
    rows = clock_and_l1(args.repeats)
    print("\nclock vs L1 load-to-use: per repeat GHz x 16 KiB chase ns = cycles")
    for row in rows:
        print(f"  {row['ghz']:.3f} GHz (least CPU share {row['share']:.2f}) x {row['l1_ns']:.3f} ns = "
              f"{row['cycles']:.2f} cycles")
    print(f"  median {statistics.median(row['cycles'] for row in rows):.2f} cycles (4 expected on Zen 4)")
    print(perf_cycles())
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    sys.exit(main())
