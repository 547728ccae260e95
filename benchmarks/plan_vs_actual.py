#!/usr/bin/env python3
"""A profile's plan against what it then took, and the precision each experiment kept, through site.yml on
this machine (issue 29 items 3-6).

Usage: benchmarks/plan_vs_actual.py [--profiles quick,standard] [--fake-llc-mib 480] [--json FILE]
       (run it under the machine lock: flock /work/locks/machine.lock benchmarks/plan_vs_actual.py ...)

Each profile is one real `ansible-playbook site.yml` against this machine (the embedded inventory) into a
temporary directory. Printed per profile: the load average before and after (the machine may be shared;
every time here is a wall time), the plan's price and budget, the experiments' summed wall time, and per
experiment its price, what it took, actual / price (flagged past 1.25), the points planned and measured,
its precision target and the share of its points that met it (view precision_summary), and what the
budget cut.

--fake-llc-mib N runs against a copy of this machine's sysfs and /proc whose last-level cache reports N MiB
(a guest whose sysfs shows the host's whole L3, as a Zen 5 guest's 480 MiB did), through
FLEETSCOPE_SYSFS_ROOT: the facts module reads the copy as the root of /sys and /proc, the kernels (which read
$FLEETSCOPE_SYSFS_ROOT as /sys/devices/system/cpu and its ../node) find the same files through links.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

PROJECT = Path(__file__).resolve().parents[1]
PLAYBOOK = PROJECT / ".venv" / "bin" / "ansible-playbook"
# What the facts module and the kernels read of /sys and /proc (plugins/modules/fleetscope_facts.py).
PROC_FILES = ("cpuinfo", "meminfo", "cmdline", "stat", "sys/vm/nr_hugepages", "sys/kernel/perf_event_paranoid")


def load_average() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def fake_root(folder: Path, llc_mib: int) -> Path:
    """A copy of this machine's CPU and node sysfs and the /proc files the facts read, the last level's
    size set to llc_mib on every CPU."""
    root = folder / "root"
    cpu_dir = Path("/sys/devices/system/cpu")
    target = root / "sys/devices/system/cpu"
    for cpu in sorted(cpu_dir.glob("cpu[0-9]*")):
        for sub in ("topology", "cache"):
            for path in (cpu / sub).rglob("*"):
                if path.is_file():
                    try:
                        text = path.read_text()
                    except OSError:
                        continue
                    out = target / cpu.name / path.relative_to(cpu)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_text(text)
        levels = {index: int((index / "level").read_text()) for index in (target / cpu.name / "cache").glob("index*")
                  if (index / "level").exists()}
        last = max(levels.values())
        for index, level in levels.items():
            if level == last:
                (index / "size").write_text(f"{llc_mib * 1024}K\n")
    (target / "online").write_text(Path("/sys/devices/system/cpu/online").read_text())
    keep = re.compile(r"node\d+|cpulist|distance")
    shutil.copytree("/sys/devices/system/node", root / "sys/devices/system/node", symlinks=False,
                    ignore=lambda directory, names: [name for name in names if not keep.fullmatch(name)],
                    ignore_dangling_symlinks=True, dirs_exist_ok=True)
    for name in PROC_FILES:
        out = root / "proc" / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(Path("/proc", name).read_text())
    for name in ("enabled", "defrag"):
        out = root / "sys/kernel/mm/transparent_hugepage" / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(Path("/sys/kernel/mm/transparent_hugepage", name).read_text())
    (root / "etc").mkdir()
    shutil.copy("/etc/os-release", root / "etc/os-release")
    # the kernels read $FLEETSCOPE_SYSFS_ROOT as the cpu directory and its ../node: links make the copy serve both
    for cpu in target.iterdir():
        (root / cpu.name).symlink_to(cpu)
    (folder / "node").symlink_to(root / "sys/devices/system/node")
    return root


def run_profile(profile: str, workdir: Path, llc_mib: int | None) -> dict:
    extra = {"fleet_profile": profile, "fleet_results_dir": str(workdir / "results"),
             "fleet_warehouse": str(workdir / "fleet.duckdb"), "fleet_reports_dir": str(workdir / "reports")}
    environment = dict(os.environ)
    if llc_mib:
        environment["FLEETSCOPE_SYSFS_ROOT"] = str(fake_root(workdir, llc_mib))
    before = load_average()
    started = time.monotonic()
    proc = subprocess.run([str(PLAYBOOK), "site.yml", "-e", json.dumps(extra)], cwd=PROJECT, capture_output=True,
                          text=True, env=environment)
    wall = time.monotonic() - started
    after = load_average()
    if proc.returncode != 0:
        raise SystemExit(f"{profile}: site.yml failed:\n{proc.stdout[-4000:]}")
    with duckdb.connect(str(workdir / "fleet.duckdb"), read_only=True) as db:
        rows = db.execute(
            "SELECT p.experiment, p.status, p.planned_s, p.actual_s, p.actual_share, p.overshoot, p.planned_points, "
            "p.points, s.target_rel, s.points_met, s.share_met, s.points AS precision_points, p.plan_cuts "
            "FROM plan_vs_actual AS p LEFT JOIN precision_summary AS s USING (run_id, host, experiment) "
            "ORDER BY p.experiment").fetchall()
        budget, bound = db.execute("SELECT plan_budget_s, plan_bound_s FROM runs").fetchone()
        met, targeted = db.execute(
            "SELECT count(*) FILTER (WHERE met_target), count(*) FILTER (WHERE target_rel IS NOT NULL) "
            "FROM precision_points WHERE final").fetchone()
    return {"profile": profile, "llc_mib": llc_mib, "playbook_s": wall, "load_before": before, "load_after": after,
            "budget_s": budget, "bound_s": bound, "rows": rows, "points_met": met, "points_targeted": targeted}


def show(result: dict) -> None:
    rows = result["rows"]
    took = sum(row[3] or 0 for row in rows if row[2] is not None)
    where = f", last-level cache faked to {result['llc_mib']} MiB" if result["llc_mib"] else ""
    print(f"## {result['profile']}{where}: experiments {took:.1f} s of a price of {result['bound_s']:.1f} s "
          f"(budget {result['budget_s']} s); playbook {result['playbook_s']:.0f} s; load average "
          f"{result['load_before']} before, {result['load_after']} after")
    if result["points_targeted"]:
        print(f"points at their experiment's target: {result['points_met']} of {result['points_targeted']} "
              f"({100 * result['points_met'] / result['points_targeted']:.0f}%)")
    print("| experiment | status | price s | took s | took/price | points planned | points | target | met | cuts |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (name, status, planned, actual, share, over, planned_points, points, target, met, share_met, counted,
         cuts) in rows:
        ratio = f"{share:.2f}{' OVER' if over else ''}" if share is not None else ""
        target_text = f"±{100 * target:g}%" if target else "fixed"
        met_text = f"{met}/{counted} ({100 * share_met:.0f}%)" if share_met is not None else ""
        cells = [name, status or "not recorded", "not priced" if planned is None else planned,
                 "" if actual is None else actual, ratio, "" if planned_points is None else planned_points,
                 "" if points is None else points, target_text, met_text, cuts or ""]
        print("| " + " | ".join(map(str, cells)) + " |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profiles", default="quick,standard")
    parser.add_argument("--fake-llc-mib", type=int, default=None, metavar="MIB")
    parser.add_argument("--json", type=Path, help="also write every result as JSON")
    args = parser.parse_args()
    results = []
    for profile in args.profiles.split(","):
        with tempfile.TemporaryDirectory(prefix=f"plan-vs-actual-{profile}-") as tmp:
            result = run_profile(profile, Path(tmp), args.fake_llc_mib)
        show(result)
        results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
