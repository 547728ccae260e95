#!/usr/bin/env python3
"""What the reference workload costs per profile (issue 31: cheap and bounded, for the plan's budgets), and how
far its profiles rank functions.

Usage: flock /work/locks/machine.lock benchmarks/reference_workload_time.py [--profiles quick,standard,full]

Builds the kernels in a temporary directory and, per profile, runs the processes the workloads role runs for
the reference workload, with the role's sizes (roles/workloads/vars/main.yml): the `workload` kernel timing
alloc_walk `repeats` times inside `perf stat -x,` with the role's events, then one `perf record` by time
(cycles, or cpu-clock without a PMU) and, where the PMU samples cache misses, one by misses, each read back
with `perf report`. It prints each step's wall time, their sum, the role's worst case (every run at its
timeout cap), the time profile's samples and how many functions the sample rule ranks, and the load average
(the dev VM is shared: compare within one run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from fleetscope.analyze.profiling import check_profile  # noqa: E402
from fleetscope.ingest.parsers import perf_report  # noqa: E402

ROLE = PROJECT / "roles" / "workloads"


def build(directory: Path) -> Path:
    source = directory / "kernels"
    shutil.copytree(PROJECT / "kernels", source, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-C", str(source)], check=True, capture_output=True)
    return source / "build" / "fleetscope-kernels"


def timed(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    return time.monotonic() - started, proc


def pmu_samples_misses() -> bool:
    proc = subprocess.run(["perf", "stat", "-x,", "-e", "cache-misses", "--", "true"], capture_output=True, text=True)
    return "<not" not in proc.stderr and proc.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default="quick,standard,full")
    arguments = parser.parse_args()
    profiles = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())["__workloads_profiles"]
    events = ",".join(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["workloads_perf_events"])
    hardware = pmu_samples_misses()
    time_event = "cycles" if hardware else "cpu-clock"
    print(f"load average before: {' '.join(f'{value:.2f}' for value in os.getloadavg())}; "
          f"{os.cpu_count()} CPUs; perf samples misses here: {hardware}")
    with tempfile.TemporaryDirectory(prefix="fleetscope-reference-") as work:
        work = Path(work)
        binary = build(work)
        for name in arguments.profiles.split(","):
            profile = profiles[name]
            command = [str(binary), "alloc_walk", "--live-bytes", str(profile["reference_live_bytes"]), "--samples", "1",
                       "--seed", "31"]
            where = ["--timeout-s", str(profile["reference_timeout_s"])]
            stat_s, proc = timed(["perf", "stat", "-x,", "-o", str(work / "stat.csv"), "-e", events, "--",
                                  str(binary), "workload", "--name", "reference_alloc_walk", "--samples",
                                  str(profile["repeats"]), *where, "--output", "/dev/null", "--", *command], work)
            assert proc.returncode == 0, proc.stderr
            record = [str(binary), "workload", "--name", "reference_alloc_walk", "--samples", "1", *where,
                      "--output", "/dev/null", "--", *command]
            steps = [("perf stat", stat_s)]
            checks = []
            for kind, event in (("time", time_event), ("misses", "cache-misses" if hardware else None)):
                if event is None:
                    continue
                data = work / f"{kind}.perf.data"
                seconds, proc = timed(["perf", "record", "-q", "-e", event, "-F", str(profile["reference_record_frequency"]),
                                       "-o", str(data), "--", *record], work)
                assert proc.returncode == 0, proc.stderr
                report_s, report = timed(["perf", "report", "-i", str(data), "--stdio", "--no-children", "-F",
                                          "overhead,sample,dso,sym"], work)
                steps += [(f"perf record {event}", seconds), (f"perf report {event}", report_s)]
                (parsed,) = perf_report.parse(report.stdout)["profiles"]
                checks.append(check_profile(parsed))
            runs = profile["repeats"] + len(checks)
            print(f"\n{name}: {profile['reference_live_bytes'] >> 20} MiB of live blocks, {profile['repeats']} run(s) under "
                  f"perf stat + {len(checks)} under perf record at {profile['reference_record_frequency']} Hz")
            for step, seconds in steps:
                print(f"  {step:<28} {seconds:7.2f} s")
            print(f"  {'total':<28} {sum(seconds for _, seconds in steps):7.2f} s; worst case {runs} runs x "
                  f"{profile['reference_timeout_s']} s cap = {runs * profile['reference_timeout_s']} s")
            for check in checks:
                print(f"  {check.event}: {check.text}")
    print(f"\nload average after: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
