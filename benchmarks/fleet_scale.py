"""How the fleet page, `fleetscope outliers` and `fleetscope compare` scale with the fleet: synthetic fleets of
10 / 100 / 1,000 hosts built from one real bundle (report_scale.py's builder: the default run of
tests/fixtures/default_run copied per host), half of them in inventory group rack_a and half in rack_b.

    .venv/bin/python benchmarks/fleet_scale.py --cache DIR [--sizes 10,100,1000] [--repeats 3] [--build-only]

Per fleet size it reports:
  * the fleet page: `fleetscope report` when only index.html has to be written again (its host pages are
    unchanged: the report keeps each run's summary beside its page), and the page's size;
  * `fleetscope outliers` (table output);
  * a two-group `fleetscope compare group:rack_a group:rack_b`, as JSON and as the HTML page, and a two-host one;
each the median of --repeats runs of the CLI as a user runs it (a subprocess: start-up and imports counted).
Targets (issue 16), at 1,000 hosts: fleet page <= 5 s and <= 5 MB; outliers and compare <= 1 s.

Loading 1,000 bundles takes a quarter of an hour (about a second per bundle), and the first report writes
1,000 host pages: both are done once per fleet size into --cache DIR (DIR/fleet-<N>/: results/, fleet.duckdb,
reports/) and reused by every later run of the benchmark with the same bundle. Build the cache without the
machine lock (`--build-only`), then time under it:
    .venv/bin/python benchmarks/fleet_scale.py --cache /var/tmp/fleet-scale --build-only
    flock /tmp/fleetscope-machine.lock .venv/bin/python benchmarks/fleet_scale.py --cache /var/tmp/fleet-scale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_scale import DEFAULT_BUNDLE, copy_bundle, fleetscope, run_id  # noqa: E402 (the benchmarks folder)

PAGE_LIMIT_S, PAGE_LIMIT_MB, COMMAND_LIMIT_S = 5.0, 5.0, 1.0


def bundle_digest(bundle: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(bundle.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(bundle).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def build(bundle: Path, hosts: int, fleet: Path) -> None:
    """The fleet's bundles, warehouse and first report, unless the cache already holds them for this bundle."""
    stamp = fleet / "built-from"
    digest = bundle_digest(bundle)
    if stamp.is_file() and stamp.read_text() == digest:
        return
    results = fleet / "results"
    if fleet.exists():
        for path in sorted(fleet.rglob("*"), reverse=True):
            path.unlink() if path.is_file() or path.is_symlink() else path.rmdir()
    results.mkdir(parents=True)
    groups = {f"host{index:04d}": ["lab", "rack_a" if index % 2 == 0 else "rack_b"] for index in range(hosts)}
    for index in range(hosts):
        copy_bundle(bundle, results, f"host{index:04d}", run_id(index), inventory_groups=groups[f"host{index:04d}"])
    (fleet / "inventory-groups.json").write_text(json.dumps(groups))  # the controller's, as the play gives them
    started = time.perf_counter()
    fleetscope("ingest", results, "--db", fleet / "fleet.duckdb", "--inventory-groups", fleet / "inventory-groups.json")
    print(f"{hosts:>5} hosts: loaded in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    fleetscope("report", "--db", fleet / "fleet.duckdb", "--out", fleet / "reports")
    print(f"{hosts:>5} hosts: first report in {time.perf_counter() - started:.0f} s", flush=True)
    stamp.write_text(digest)


def timed(repeats: int, *arguments) -> float:
    return statistics.median(fleetscope(*arguments)[0] for _ in range(repeats))


def fleet_page_s(fleet: Path) -> float:
    """`report` writing the fleet page alone: index.html removed, every host page unchanged."""
    (fleet / "reports" / "index.html").unlink()
    elapsed, stdout = fleetscope("report", "--db", fleet / "fleet.duckdb", "--out", fleet / "reports")
    if not stdout.startswith("wrote 1 pages"):
        raise SystemExit(f"expected the fleet page alone to be written, got: {stdout.strip()}")
    return elapsed


def measure(fleet: Path, hosts: int, repeats: int) -> dict:
    db = fleet / "fleet.duckdb"
    # a warehouse and pages an earlier fleetscope wrote into the cache are brought up to date first (not timed)
    fleetscope("migrate", "--db", db)
    fleetscope("report", "--db", db, "--out", fleet / "reports")
    page_s = statistics.median(fleet_page_s(fleet) for _ in range(repeats))
    page_mb = (fleet / "reports" / "index.html").stat().st_size / 2**20
    return {
        "hosts": hosts, "page_s": page_s, "page_mb": page_mb,
        "outliers_s": timed(repeats, "outliers", "--db", db),
        "groups_json_s": timed(repeats, "compare", "--db", db, "group:rack_a", "group:rack_b", "--format", "json",
                               "--out", fleet / "compare.json"),
        "groups_html_s": timed(repeats, "compare", "--db", db, "group:rack_a", "group:rack_b",
                               "--out", fleet / "reports" / "compare.html"),
        "hosts_html_s": timed(repeats, "compare", "--db", db, "host0000", "host0001",
                              "--out", fleet / "reports" / "compare-hosts.html"),
        "query_s": timed(repeats, "query", "--db", db, "SELECT 1"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True, help="folder holding the fleets between runs")
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE, help="a real bundle results/<run_id>/<host>/")
    parser.add_argument("--sizes", default="10,100,1000", help="fleet sizes (default: 10,100,1000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command; the median is shown")
    parser.add_argument("--build-only", action="store_true", help="build the cache, time nothing")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    for hosts in sizes:
        build(arguments.bundle, hosts, arguments.cache / f"fleet-{hosts}")
    if arguments.build_only:
        return 0
    rows = []
    for hosts in sizes:
        row = measure(arguments.cache / f"fleet-{hosts}", hosts, arguments.repeats)
        rows.append(row)
        print(f"{hosts:>5} hosts: fleet page {row['page_s']:.2f} s, {row['page_mb']:.2f} MB | outliers "
              f"{row['outliers_s']:.2f} s | compare rack_a vs rack_b ({hosts // 2} hosts each): json "
              f"{row['groups_json_s']:.2f} s, html {row['groups_html_s']:.2f} s | compare two hosts html "
              f"{row['hosts_html_s']:.2f} s | `query SELECT 1` (start-up and opening the warehouse) "
              f"{row['query_s']:.2f} s", flush=True)
    largest = rows[-1]
    verdict = {"fleet page time": largest["page_s"] <= PAGE_LIMIT_S, "fleet page size": largest["page_mb"] <= PAGE_LIMIT_MB,
               "outliers": largest["outliers_s"] <= COMMAND_LIMIT_S,
               "two-group compare (json)": largest["groups_json_s"] <= COMMAND_LIMIT_S,
               "two-group compare (html)": largest["groups_html_s"] <= COMMAND_LIMIT_S}
    print(f"targets at {largest['hosts']} hosts (fleet page <= {PAGE_LIMIT_S:g} s and {PAGE_LIMIT_MB:g} MB, "
          f"commands <= {COMMAND_LIMIT_S:g} s): " + "; ".join(f"{name} {'met' if met else 'MISSED'}"
                                                              for name, met in verdict.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
