#!/usr/bin/env python3
"""Cost of one sweep of many points (issue 27 item 5): `fleetscope ingest` of a bundle whose latency sweep
has N points of distinct sizes, and `fleetscope infer --csv` of a curve of N rows, at N and at twice N.
Before the fix ingest took 59 s at 30 000 points and 237 s at 60 000, `infer --csv` 28 s at 50 000 rows
and 272 s at 100 000: quadratic and worse. Each case is a real command in a child process; its CPU time
(user + system, from wait4) is printed beside the wall time, so a busy machine shows as wall time only.

Usage: benchmarks/sweep_points.py [--points 30000] [--rows 50000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT / "tests"))

from conftest import BundleBuilder, latency_points  # noqa: E402 (the tests' bundle builder)


def timed(*arguments) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of `fleetscope ARGUMENTS` in a child process."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "fleetscope", *map(str, arguments)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=PROJECT)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"fleetscope {' '.join(map(str, arguments))} failed: {process.stderr.read().decode()[-500:]}")
    return usage.ru_utime + usage.ru_stime, wall


def sweep_bundle(folder: Path, points: int) -> Path:
    """A bundle whose latency sweep has `points` points, each a size of its own, rising smoothly."""
    template = latency_points()[0]
    sweep = []
    for index in range(points):
        point = copy.deepcopy(template)
        latency = 1 + 100 * (index / points) ** 2
        point["params"]["working_set_bytes"] = 4096 + index * 448
        point["samples"] = [latency, latency * 1.01, latency * 1.02]
        point["summary"] = {"min": latency, "median": latency * 1.01, "mean": latency * 1.01, "ci95_low": latency,
                            "ci95_high": latency * 1.02, "count": 3}
        point["context"]["order_index"] = index
        sweep.append(point)
    BundleBuilder(folder / "results").write(results={"results/latency_sweep.jsonl": sweep})
    return folder / "results"


def curve_csv(path: Path, rows: int) -> Path:
    path.write_text("bytes,ns\n" + "".join(f"{4096 + index * 448},{1 + 100 * (index / rows) ** 2:.4f}\n"
                                           for index in range(rows)))
    return path


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--points", type=int, default=30_000)
    options.add_argument("--rows", type=int, default=50_000)
    options.add_argument("--keep", type=Path, help="write the inputs here and keep them")
    arguments = options.parse_args()
    folder = arguments.keep or Path(tempfile.mkdtemp(prefix="fleetscope-bench-"))
    try:
        for points in (arguments.points, 2 * arguments.points):
            results = sweep_bundle(folder / f"sweep-{points}", points)
            cpu, wall = timed("ingest", results, "--db", folder / f"sweep-{points}" / "fleet.duckdb")
            print(f"ingest, one sweep of {points:>7} points: {cpu:7.1f} s CPU, {wall:7.1f} s wall", flush=True)
        for rows in (arguments.rows, 2 * arguments.rows):
            cpu, wall = timed("infer", "--csv", curve_csv(folder / f"curve-{rows}.csv", rows), "--format", "json")
            print(f"infer --csv, {rows:>7} rows:             {cpu:7.1f} s CPU, {wall:7.1f} s wall", flush=True)
    finally:
        if arguments.keep is None:
            shutil.rmtree(folder)


if __name__ == "__main__":
    main()
