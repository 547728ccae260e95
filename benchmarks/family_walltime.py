#!/usr/bin/env python3
"""Wall time and precision of an experiment family, or the whole suite, through site.yml on this machine.

Usage: benchmarks/family_walltime.py [--tags latency] [--profiles quick,standard]
       benchmarks/family_walltime.py --tags affinity,smt,aio --profiles quick   (the CPU/OS/IO family)
       benchmarks/family_walltime.py --tags all --profiles quick,standard       (the whole suite, fio included)
       (run it under the machine lock: flock /tmp/fleetscope-machine.lock benchmarks/family_walltime.py ...)

Each profile is one real `ansible-playbook site.yml` run (with `--tags TAGS` unless TAGS is `all`) against
the embedded default inventory (this machine), writing into a temporary directory. Printed per profile:
the wall time of the whole playbook and the sum of the experiments' own times, then one row per
experiment as the warehouse recorded it: status, wall time, points, and how sure its points are
(fleetscope.analyze.precision: the share that met the profile's target, the median and 90th-percentile CI95
half-width of the median, points that stopped at their time cap, points measured twice), and the run's
one-sentence summary.
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
sys.path.insert(0, str(PROJECT))

from fleetscope.analyze.precision import percent, run_precision  # noqa: E402  (the checkout's package)
from fleetscope.resources import sql  # noqa: E402


def run_profile(profile: str, tags: str, workdir: Path) -> dict:
    extra = {"fleet_profile": profile, "fleet_results_dir": str(workdir / "results"),
             "fleet_warehouse": str(workdir / "fleet.duckdb"), "fleet_reports_dir": str(workdir / "reports")}
    selection = [] if tags == "all" else ["--tags", tags]
    started = time.monotonic()
    proc = subprocess.run([str(PLAYBOOK), "site.yml", *selection, "-e", json.dumps(extra)], cwd=PROJECT,
                          capture_output=True, text=True)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{profile}: site.yml failed:\n{proc.stdout[-3000:]}")
    with duckdb.connect(str(workdir / "fleet.duckdb"), read_only=True) as db:
        experiments = db.execute(sql("benchmarks/experiment_times")).fetchall()
        (run_id, host), = db.execute(sql("benchmarks/only_run")).fetchall()
        precision = run_precision(db, run_id, host)
    return {"playbook_s": wall, "experiments": experiments, "precision": precision}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tags", default="latency", help="site.yml --tags, or 'all' for the whole suite")
    parser.add_argument("--profiles", default="quick,standard")
    args = parser.parse_args()
    for profile in args.profiles.split(","):
        with tempfile.TemporaryDirectory(prefix=f"fleetscope-walltime-{profile}-") as tmp:
            result = run_profile(profile, args.tags, Path(tmp))
        precision = {e.experiment: e for e in result["precision"].experiments}
        total = sum(wall or 0 for _, _, wall, _ in result["experiments"])
        print(f"## {profile}: experiments {total:.1f} s, whole playbook {result['playbook_s']:.1f} s")
        print("| experiment | status | wall s | points | met target | median ± | p90 ± | at cap | measured twice |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, status, wall, points in result["experiments"]:
            e = precision.get(name)
            figures = (f"{percent(e.share_met) if e.target_rel else 'no target'} | {percent(e.median_achieved_rel)} "
                       f"| {percent(e.p90_achieved_rel)} | {e.stopped_at_cap} | {e.requeued}"
                       if e else "(no precision record) | | | |")
            print(f"| {name} | {status} | {wall or 0:.1f} | {points} | {figures} |")
        print(f"\n{result['precision'].sentence}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
