#!/usr/bin/env python3
"""How much of what `perf stat` counts around a kernel process is the timed region the per-point
counters count (issue 20: a process-wide count includes set-up, allocation and calibration).

Usage: benchmarks/counters_timed_region.py [--repeats 3] [--cpu 0]

Builds the kernels in a temporary directory, then runs each case below as one process under
`perf stat -x, -e task-clock,page-faults,context-switches` and sums the per-point counters
(`context.counters.events`) of the records it wrote. For each event it prints the process count, the
timed-region count and their ratio (process / timed: how many times the process count overstates the
measurement), median over the repeats; task-clock in ms. Events the PMU cannot count here (cycles, instructions on a VM)
are listed with their state, never as numbers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
EVENTS = ("task-clock", "page-faults", "context-switches")
# (name, kernel argv after the binary): a small-cache chase point, a DRAM chase point, a SAXPY stride
CASES = (
    ("chase 32 KiB", ["chase", "--min", "32K", "--max", "32K", "--samples", "11"]),
    ("chase 256 MiB", ["chase", "--min", "256M", "--max", "256M", "--samples", "11"]),
    ("saxpy stride 8", ["saxpy", "--size", "64M", "--strides", "8", "--samples", "11"]),
)


def build(directory: Path) -> Path:
    source = directory / "kernels"
    shutil.copytree(PROJECT / "kernels", source, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-C", str(source)], check=True, capture_output=True)
    return source / "build" / "fleetscope-kernels"


def perf_counts(stderr: str) -> dict[str, float | str]:
    """perf stat -x, lines: value,unit,event,... ; a value that is not a number is its state."""
    counts: dict[str, float | str] = {}
    for line in stderr.splitlines():
        fields = line.split(",")
        if len(fields) < 3 or fields[2] not in EVENTS:
            continue
        try:
            counts[fields[2]] = float(fields[0])
        except ValueError:
            counts[fields[2]] = fields[0]
    return counts


def timed_counts(records: list[dict]) -> tuple[dict[str, float], dict[str, str]]:
    """The per-point counters summed over the process's records; the state of each event not counted."""
    sums: dict[str, float] = {}
    states: dict[str, str] = {}
    for record in records:
        for name, event in (record.get("context", {}).get("counters", {}).get("events") or {}).items():
            if event.get("state") == "counted" and event.get("value") is not None:
                # task-clock counts ns; perf stat prints it in ms
                value = event["value"] / 1e6 if name == "task-clock" else event["value"]
                sums[name] = sums.get(name, 0.0) + value
            else:
                states[name] = event.get("state", "?")
    return sums, states


def run_case(binary: Path, argv: list[str], cpu: int, out: Path) -> tuple[dict, dict, dict]:
    out.unlink(missing_ok=True)
    result = subprocess.run(["perf", "stat", "-x,", "-e", ",".join(EVENTS), str(binary), *argv,
                             "--cpu", str(cpu), "--output", str(out)], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{argv[0]} failed ({result.returncode}): {result.stderr[-2000:]}")
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    timed, states = timed_counts(records)
    return perf_counts(result.stderr), timed, states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=0)
    args = parser.parse_args()
    if shutil.which("perf") is None:
        sys.exit("perf is not installed (Debian: linux-perf)")
    with tempfile.TemporaryDirectory(prefix="fleetscope-counters-") as scratch:
        binary = build(Path(scratch))
        print(f"{'case':<16} {'event':<17} {'process':>14} {'timed region':>14} {'process/timed':>14}")
        for name, argv in CASES:
            runs = [run_case(binary, argv, args.cpu, Path(scratch) / "points.jsonl") for _ in range(args.repeats)]
            for event in EVENTS:
                process = [run[0].get(event) for run in runs]
                timed = [run[1].get(event) for run in runs]
                if not all(isinstance(value, float) for value in process) or None in timed:
                    state = {str(value) for value in process if not isinstance(value, float)}
                    state |= {run[2].get(event, "absent") for run in runs if event not in run[1]}
                    print(f"{name:<16} {event:<17} {'':>14} {'':>14} {', '.join(sorted(state)):>14}")
                    continue
                ratios = [p / t for p, t in zip(process, timed) if t]
                # none in the timed region: every count the process made was set-up or teardown
                ratio = f"{statistics.median(ratios):>13.2f}x" if len(ratios) == len(runs) else f"{'all outside':>14}"
                print(f"{name:<16} {event:<17} {statistics.median(process):>14,.1f} "
                      f"{statistics.median(timed):>14,.1f} {ratio}")
            hardware = sorted({f"{event}: {state}" for run in runs for event, state in run[2].items()
                               if event not in EVENTS})
            if hardware:
                print(f"{'':<16} not counted here: {'; '.join(hardware)}")


if __name__ == "__main__":
    main()
