#!/usr/bin/env python3
"""The sample clock on a shared machine (issue 29 item 5): the same single-thread kernel points timed on the wall
clock (a build of another checkout, before timer_thread_ns) and on the thread's own CPU time (this checkout),
interleaved, with standard's targets and caps.

Usage: benchmarks/sample_clock.py --wall-src DIR [--rounds 2] [--cap 1.0]
       (run it under the machine lock: flock /work/locks/machine.lock benchmarks/sample_clock.py ...)

--wall-src is a checkout (or `git archive` of one) whose kernels time every sample on the wall clock, e.g. main
before this change. Both kernels/ trees are built into a temporary directory. Per round and build, each case
runs once (the order alternates between rounds): a chase over L1..DRAM sizes (latency_sweep's ±1%), a TLB pair
sweep (±2%) and one-thread bandwidth read and copy over L1..DRAM sizes (±2%). Printed per case and build: the
points, how many met their target, the median CI95 half-width (relative), the median of the smallest
per-point samples, and the process's wall time; and the load average around each run. Nothing is asserted:
the machine is shared, and the point is the ratio of the two builds under the same load.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]

CASES = {
    "chase ±1%": ["chase", "--cpu", "0", "--target-ci", "0.01", "--sizes", "16k,128k,1m,4m,16m,64m,256m"],
    "tlb ±2%": ["tlb", "--cpu", "0", "--target-ci", "0.02", "--pages", "16,64,256,1024,4096", "--page-size", "4k"],
    "bandwidth ±2%": ["bandwidth", "--cpu", "0", "--target-ci", "0.02", "--ops", "read,copy", "--stores", "regular",
                      "--sizes", "16k,1m,8m,256m"],
}


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def build(source: Path, into: Path) -> Path:
    shutil.copytree(source / "kernels", into, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-s", "-C", str(into)], check=True, capture_output=True, timeout=600)
    return into / "build" / "fleetscope-kernels"


def run_case(binary: Path, argv: list[str], cap: float) -> dict:
    started = time.monotonic()
    proc = subprocess.run([str(binary), *argv, "--samples", "11", "--min-sample-ms", "20",
                           "--max-point-seconds", str(cap), "--max-requeues", "0", "--seed", "7"],
                          capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{binary} {' '.join(argv)}: exit {proc.returncode}: {proc.stderr[-400:]}")
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    precision = [record["context"]["precision"] for record in records]
    met = sum(1 for p in precision if p["achieved_rel"] is not None and p["achieved_rel"] <= p["target_rel"])
    return {"points": len(records), "met": met, "wall_s": wall,
            "half_width": statistics.median(p["achieved_rel"] or float("inf") for p in precision),
            "min": statistics.median(record["summary"]["min"] for record in records)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wall-src", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cap", type=float, default=1.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sample-clock-") as folder:
        builds = {"wall": build(args.wall_src, Path(folder) / "wall"),
                  "thread CPU": build(PROJECT, Path(folder) / "thread")}
        totals: dict = {}
        for round_index in range(args.rounds):
            order = list(builds) if round_index % 2 == 0 else list(reversed(builds))
            for case, argv in CASES.items():
                for name in order:
                    before = load_average()
                    result = run_case(builds[name], argv, args.cap)
                    print(f"round {round_index + 1} {case:14} {name:10}: {result['met']:2}/{result['points']:2} at "
                          f"target, median half-width {result['half_width']:.2%}, median min {result['min']:.4g}, "
                          f"{result['wall_s']:.1f} s; load {before} -> {load_average()}", flush=True)
                    total = totals.setdefault((case, name), {"points": 0, "met": 0, "wall_s": 0.0})
                    for key in total:
                        total[key] += result[key]
        print("\n| case | clock | points at target | wall s |\n|---|---|---|---|")
        for (case, name), total in totals.items():
            print(f"| {case} | {name} | {total['met']}/{total['points']} ({total['met'] / total['points']:.0%}) "
                  f"| {total['wall_s']:.1f} |")


if __name__ == "__main__":
    main()
