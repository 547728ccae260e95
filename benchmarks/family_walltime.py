#!/usr/bin/env python3
"""Wall time of an experiment family through site.yml on this machine, per profile.

Usage: benchmarks/family_walltime.py [--tags latency] [--profiles quick,standard]
       benchmarks/family_walltime.py --tags affinity,smt,aio --profiles quick   (the CPU/OS/IO family)

Each profile is one real `ansible-playbook site.yml --tags TAGS` run against the embedded default
inventory (this machine), writing into a temporary directory. Printed per profile: the wall time of
the whole playbook, and each experiment's own wall time and status as the warehouse recorded them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

PROJECT = Path(__file__).resolve().parents[1]
PLAYBOOK = PROJECT / ".venv" / "bin" / "ansible-playbook"


def run_profile(profile: str, tags: str, workdir: Path) -> dict:
    extra = {"fleet_profile": profile, "fleet_results_dir": str(workdir / "results"),
             "fleet_warehouse": str(workdir / "fleet.duckdb"), "fleet_reports_dir": str(workdir / "reports")}
    started = time.monotonic()
    proc = subprocess.run([str(PLAYBOOK), "site.yml", "--tags", tags, "-e", json.dumps(extra)], cwd=PROJECT,
                          capture_output=True, text=True)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{profile}: site.yml failed:\n{proc.stdout[-3000:]}")
    with duckdb.connect(str(workdir / "fleet.duckdb"), read_only=True) as db:
        experiments = db.execute("select experiment, status, wall_s, point_count from experiments "
                                 "order by run_order").fetchall()
    return {"playbook_s": wall, "experiments": experiments}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tags", default="latency")
    parser.add_argument("--profiles", default="quick,standard")
    args = parser.parse_args()
    for profile in args.profiles.split(","):
        with tempfile.TemporaryDirectory(prefix=f"fleetscope-walltime-{profile}-") as tmp:
            result = run_profile(profile, args.tags, Path(tmp))
        total = sum(wall or 0 for _, _, wall, _ in result["experiments"])
        print(f"## {profile}: experiments {total:.1f} s, whole playbook {result['playbook_s']:.1f} s")
        print("| experiment | status | wall s | points |")
        print("|---|---|---|---|")
        for name, status, wall, points in result["experiments"]:
            print(f"| {name} | {status} | {wall:.1f} | {points} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
