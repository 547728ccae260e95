"""How `fleetscope report` scales with the fleet: synthetic fleets of 10 / 100 / 1,000 hosts built from one
real bundle, then time per host page, page size, total size, and the time to report again after one host
was re-run (only that host's pages change).

    .venv/bin/python benchmarks/report_scale.py [--bundle DIR] [--sizes 10,100,1000] [--work DIR]

The bundle (default: the default run in tests/fixtures/default_run) is copied once per host with the host
name and run id changed (the manifest's `host` and `run_id`, and the directory names), loaded with
`fleetscope ingest` into one warehouse per fleet size, and reported with `fleetscope report` as a user
runs it (a subprocess, so interpreter start-up and imports are counted). Per host page is given two
ways: the first report's time over its pages (it also builds the charts' script once, about a second),
and `report --all` less a report that writes nothing, over the pages (what each further page costs). Targets (issue 15): a host page
at most 400 KB plus the shared assets, at most 0.2 s per host page, and at most 10 s to report a fleet of
1,000 again after one host was re-run. Time it under the machine lock:
`flock /tmp/fleetscope-machine.lock .venv/bin/python benchmarks/report_scale.py`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BUNDLE = next((ROOT / "tests" / "fixtures" / "default_run" / "results").glob("*/*"))
PAGE_LIMIT_BYTES = 400 * 1024
RERUN_LIMIT_S = 10.0
PER_PAGE_LIMIT_S = 0.2


def fleetscope(*arguments) -> tuple[float, str]:
    """Run the CLI as a user would; return its wall time and stdout."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "fleetscope", *map(str, arguments)], capture_output=True, text=True,
                          cwd=ROOT)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"fleetscope {' '.join(map(str, arguments))} failed ({proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def copy_bundle(source: Path, results: Path, host: str, run_id: str, **changes) -> None:
    """Copy a bundle as `host`'s run `run_id`, with any other manifest keys replaced by `changes`."""
    target = results / run_id / host
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest.update(host=host, run_id=run_id, **changes)
    (target / "manifest.json").write_text(json.dumps(manifest))


def run_id(index: int) -> str:
    return f"20261123T{index // 3600 % 24:02d}{index // 60 % 60:02d}{index % 60:02d}Z-{index:06x}"


def measure(bundle: Path, hosts: int, work: Path) -> dict:
    results, db, out = work / "results", work / "fleet.duckdb", work / "reports"
    results.mkdir(parents=True)
    for index in range(hosts):
        copy_bundle(bundle, results, f"host{index:04d}", run_id(index))
    ingest_s, _ = fleetscope("ingest", results, "--db", db)
    report_s, stdout = fleetscope("report", "--db", db, "--out", out)
    host_pages = [path for path in out.glob("*.html") if path.name != "index.html"]
    sizes = sorted(path.stat().st_size for path in host_pages)
    assets = sum(path.stat().st_size for path in (out / "assets").iterdir())
    unchanged_s, unchanged_stdout = fleetscope("report", "--db", db, "--out", out)
    all_s, _ = fleetscope("report", "--db", db, "--out", out, "--all")  # every page again, the script kept
    # one host re-run: a newer run of host0000 is ingested, then report again
    copy_bundle(bundle, results, "host0000", "20261124T000000Z-ffffff")
    fleetscope("ingest", results / "20261124T000000Z-ffffff", "--db", db)
    rerun_s, rerun_stdout = fleetscope("report", "--db", db, "--out", out)
    return {"hosts": hosts, "ingest_s": ingest_s, "report_s": report_s, "per_page_s": report_s / len(host_pages),
            "all_s": all_s, "marginal_page_s": (all_s - unchanged_s) / len(host_pages),
            "page_kb_median": sizes[len(sizes) // 2] / 1024, "page_kb_max": sizes[-1] / 1024,
            "assets_kb": assets / 1024, "total_mb": (sum(sizes) + assets + (out / "index.html").stat().st_size) / 2**20,
            "unchanged_s": unchanged_s, "rerun_s": rerun_s,
            "report_line": stdout.strip().splitlines()[-1], "rerun_line": rerun_stdout.strip().splitlines()[-1],
            "unchanged_line": unchanged_stdout.strip().splitlines()[-1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE, help="a real bundle results/<run_id>/<host>/")
    parser.add_argument("--sizes", default="10,100,1000", help="fleet sizes (default: 10,100,1000)")
    parser.add_argument("--work", type=Path, help="where to build the fleets (default: a temporary folder, removed)")
    arguments = parser.parse_args()
    work = arguments.work or Path(tempfile.mkdtemp(prefix="report-scale-"))
    rows = []
    try:
        for hosts in (int(size) for size in arguments.sizes.split(",")):
            row = measure(arguments.bundle, hosts, work / f"fleet-{hosts}")
            rows.append(row)
            print(f"{hosts:>5} hosts: ingest {row['ingest_s']:7.1f} s | report {row['report_s']:7.2f} s = "
                  f"{row['per_page_s']:.3f} s per host page (--all {row['all_s']:.2f} s: "
                  f"{row['marginal_page_s']:.3f} s per page beyond a report's fixed cost) | page {row['page_kb_median']:.0f} KB (max "
                  f"{row['page_kb_max']:.0f}) + assets {row['assets_kb']:.0f} KB once | total {row['total_mb']:.1f} MB"
                  f" | again, nothing changed {row['unchanged_s']:.2f} s | one host re-run {row['rerun_s']:.2f} s",
                  flush=True)
            print(f"        {row['report_line']} / {row['unchanged_line']} / {row['rerun_line']}", flush=True)
    finally:
        if arguments.work is None:
            shutil.rmtree(work, ignore_errors=True)
    largest = rows[-1]
    print(f"targets: page <= {PAGE_LIMIT_BYTES // 1024} KB: {'met' if largest['page_kb_max'] * 1024 <= PAGE_LIMIT_BYTES else 'MISSED'}; "
          f"<= {PER_PAGE_LIMIT_S} s per page (beyond a report's fixed cost): "
          f"{'met' if all(row['marginal_page_s'] <= PER_PAGE_LIMIT_S for row in rows) else 'MISSED'}; "
          f"one host re-run of {largest['hosts']} <= {RERUN_LIMIT_S:g} s: "
          f"{'met' if largest['rerun_s'] <= RERUN_LIMIT_S else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
