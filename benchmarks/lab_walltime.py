#!/usr/bin/env python3
"""Wall time of one quick site.yml run over 3 lab hosts in parallel vs over 1 lab host.

Usage: benchmarks/lab_walltime.py [--tags zero_queue,c2c,pattern_stride] [--hosts 3]

Starts the lab of tests/lab (network namespaces with their own sshd on this machine; root needed),
runs `ansible-playbook -i <lab inventory> site.yml` with the same experiments first with
`--limit fslab1,localhost`, then over every lab host, and prints both wall times, their ratio and
each host's experiment wall times from the warehouse. The lab is stopped afterwards whatever
happens. All lab hosts share this machine's CPUs: on a 2-vCPU guest the kernels of 3 hosts compete
for CPU 0, so the ratio measures Ansible's fan-out plus that contention, not a real fleet's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "lab"))

from lab import Lab, LabRun, stop  # noqa: E402  (tests/lab is not a package)

# hugetlb pages come from the one kernel all lab hosts share, so the tlb hugetlb sweep is left out.
DEFAULT_TAGS = "zero_queue,c2c,pattern_stride,mlp,write_cost,fio"


def timed_run(lab: Lab, workdir: Path, tags: str, limit: str | None) -> tuple[float, list[tuple]]:
    run = LabRun(workdir, lab.inventory)
    started = time.monotonic()
    proc = run.run("site.yml", "--tags", tags, *(["--limit", limit] if limit else []), timeout=1800)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"site.yml failed ({limit or 'all hosts'}):\n{proc.stdout[-3000:]}")
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        experiments = db.execute("select host, experiment, status, wall_s from experiments "
                                 "order by host, run_order").fetchall()
    return wall, experiments


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tags", default=DEFAULT_TAGS, help=f"experiments to run (default {DEFAULT_TAGS})")
    parser.add_argument("--hosts", type=int, default=3, help="lab hosts of the parallel run (default 3)")
    args = parser.parse_args()
    lab = Lab(args.hosts).start()
    try:
        with tempfile.TemporaryDirectory(prefix="fleetscope-lab-walltime-") as tmp:
            one_s, one = timed_run(lab, Path(tmp) / "one", args.tags, "fslab1,localhost")
            many_s, many = timed_run(lab, Path(tmp) / "many", args.tags, None)
    finally:
        stop()
    print(f"## quick site.yml, --tags {args.tags}")
    print("| hosts | wall s | per host s |")
    print("|---|---|---|")
    print(f"| 1 | {one_s:.1f} | {one_s:.1f} |")
    print(f"| {args.hosts} | {many_s:.1f} | {many_s / args.hosts:.1f} |")
    print(f"\n{args.hosts} hosts / 1 host: {many_s / one_s:.2f}x the wall time for {args.hosts}x the hosts")
    print("\n| run | host | experiment | status | wall s |")
    print("|---|---|---|---|---|")
    for label, rows in (("1 host", one), (f"{args.hosts} hosts", many)):
        for host, experiment, status, wall in rows:
            print(f"| {label} | {host} | {experiment} | {status} | {wall if wall is None else f'{wall:.1f}'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
