"""How `fleetscope ingest` scales with the fleet: one warehouse grown to 10, 100 and 1,000 hosts with
synthetic bundles made from one real one (report_scale.py's recipe: the default run of
tests/fixtures/default_run as host hostNNNN, run id and folder names changed; here its files are
hard-linked, not copied, so 1,000 hosts take one bundle's disk), then re-ingested unchanged, and the
cross-fleet queries of analysis/README.md timed against the 1,000-host warehouse.

    flock /work/locks/machine.lock .venv/bin/python benchmarks/ingest_scale.py [--sizes 10,100,1000] [--batch N]

`fleetscope ingest` runs as a user runs it (a subprocess). Each outcome line it prints is timestamped as
it arrives, so a step's rate is counted between its first and last bundle (start-up, opening the
warehouse and its checkpoint at exit apart, given beside it), and the rate of the step's first and last
tenth shows whether a bundle costs more as the warehouse grows. Per step it reports bundles/s (and the
whole command's wall time), peak RSS of the ingest process, and warehouse bytes per bundle; then the
rate at which unchanged bundles are skipped, two ingest processes started together (DuckDB lets one
process write a file at a time: the second waits for the first), and each README query's time
(median of 5, in process, read-only) plus `fleetscope query` of the first as a user runs it.

Each step also says how busy the machine was: the load average around it and the share of a CPU the
ingest process got, so a slow figure from a shared machine reads as such.

Targets (issues 19 and 33): >= 50 bundles/s sustained, flat from 10 to 1,000 hosts; memory bounded by the bundle,
not the warehouse; unchanged bundles skipped at >= 500/s; each README query <= 200 ms at 1,000 hosts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_scale import DEFAULT_BUNDLE, ROOT, run_id  # noqa: E402 (the benchmarks folder)

RATE_TARGET, SKIP_TARGET, QUERY_TARGET_S = 50.0, 500.0, 0.2
BURST_S = 0.005  # outcome lines closer than this came out of one batch
README = ROOT / "analysis" / "README.md"


def link_bundle(source: Path, results: Path, host: str, run: str) -> None:
    """`source` as `host`'s run `run`: every file hard-linked but the manifest, written anew."""
    target = results / run / host
    shutil.copytree(source, target, copy_function=os.link)
    (target / "manifest.json").unlink()  # a link: writing through it would change the source
    manifest = json.loads((source / "manifest.json").read_text())
    manifest.update(host=host, run_id=run)
    (target / "manifest.json").write_text(json.dumps(manifest))


def build(source: Path, folder: Path, first: int, count: int) -> Path:
    for index in range(first, first + count):
        link_bundle(source, folder, f"host{index:04d}", run_id(index))
    return folder


BATCH: list[str] = []  # --batch N passed on to every ingest, when given


def ingest(db: Path, *folders: Path, jobs: int = 1) -> dict:
    """Run `fleetscope ingest`; its wall time, peak RSS, CPU time, the 1-minute load average before and after,
    outcomes and the arrival time of each outcome line."""
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "fleetscope", "ingest", *map(str, folders), "--db", str(db),
                                "--lock-wait", "600", "--jobs", str(jobs), *BATCH], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=ROOT)
    stamps, actions = [], []
    for line in process.stdout:
        if re.match(r"(loaded|unchanged|replaced|REFUSED) ", line):
            stamps.append(time.perf_counter())
            actions.append(line.split()[0])
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    stderr = process.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0 or "REFUSED" in actions:
        raise SystemExit(f"ingest failed ({os.waitstatus_to_exitcode(status)}): {stderr[-2000:]}")
    return {"wall_s": wall, "rss_mb": usage.ru_maxrss / 1024, "stamps": stamps, "actions": actions,
            "started": started, "cpu_s": usage.ru_utime + usage.ru_stime,
            "load": (load_before, os.getloadavg()[0])}


def busy(result: dict) -> str:
    """How busy the machine was around a step: the load average before and after it, and the share of one CPU
    the ingest process got (its CPU time over its wall time; ~1.0 when nothing else competes for its CPU)."""
    return (f"load {result['load'][0]:.1f} -> {result['load'][1]:.1f}, the ingest had "
            f"{result['cpu_s'] / result['wall_s']:.2f} of a CPU")


def rate(stamps: list[float]) -> float:
    """Bundles per second between the first outcome and the last. Outcomes come a batch at a time, so the
    first batch's count is left out (its work came before the first stamp): NaN with one batch."""
    first_batch = sum(stamp - stamps[0] < BURST_S for stamp in stamps)
    return (len(stamps) - first_batch) / (stamps[-1] - stamps[0]) if len(stamps) > first_batch else float("nan")


def command_rate(result: dict) -> float:
    """Bundles per second over the whole command: start-up, opening the warehouse and the close included."""
    return len(result["stamps"]) / result["wall_s"]


def tenth_rates(stamps: list[float]) -> tuple[float, float]:
    tenth = max(len(stamps) // 10, 2)
    return rate(stamps[:tenth]), rate(stamps[-tenth:])  # NaN where a tenth lies within one batch


def readme_queries() -> list[tuple[str, str]]:
    """(Spark port's name, DuckDB SQL) of every SQL block of analysis/README.md."""
    text = README.read_text(encoding="utf-8")
    return [(name, query) for query, name in re.findall(r"```sql\n(.*?)```\nSpark SQL: \[spark/(\w+)\.sql\]", text, re.S)]


def time_queries(db: Path) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from fleetscope.store.warehouse import open_read_only
    times = {}
    with open_read_only(db) as connection:
        for name, query in readme_queries():
            runs = []
            for _ in range(5):
                started = time.perf_counter()
                connection.execute(query).fetchall()
                runs.append(time.perf_counter() - started)
            times[name] = statistics.median(runs)
    return times


def cli_query_s(db: Path, query: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "fleetscope", "query", "--db", str(db), query], check=True,
                   capture_output=True, cwd=ROOT)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE, help="a real bundle results/<run_id>/<host>/")
    parser.add_argument("--sizes", default="10,100,1000", help="fleet sizes the warehouse grows through")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes of the --jobs run (default 2)")
    parser.add_argument("--batch", type=int, help="bundles per transaction (fleetscope ingest --batch; default: its own)")
    parser.add_argument("--work", type=Path, help="where to build the fleet (default: a temporary folder, removed)")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    if arguments.batch is not None:
        BATCH.extend(["--batch", str(arguments.batch)])
    work = arguments.work or Path(tempfile.mkdtemp(prefix="ingest-scale-", dir="/var/tmp"))
    db = work / "fleet.duckdb"
    bundle_kb = sum(path.stat().st_size for path in arguments.bundle.rglob("*") if path.is_file()) / 1024
    print(f"bundle {arguments.bundle} ({bundle_kb:.0f} KB); load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs", flush=True)
    try:
        # every step's folders first: a hard link made later changes the shared files' change time, which
        # would make the earlier steps' folders look changed to the re-ingest (real bundles share no files)
        folders, bounds = [], list(zip([0, *sizes[:-1]], sizes))
        for first_host, size in bounds:
            folders.append(build(arguments.bundle, work / f"hosts-{first_host:04d}-{size - 1:04d}", first_host,
                                 size - first_host))
        held, steps = 0, []
        for size, folder in zip(sizes, folders):
            result = ingest(db, folder)
            first, last = tenth_rates(result["stamps"])
            overhead = result["wall_s"] - (result["stamps"][-1] - result["stamps"][0])
            # one batch: no rate between batches, the command's (start-up included) stands for the step
            sustained = rate(result["stamps"])
            steps.append({"size": size, "rate": command_rate(result) if sustained != sustained else sustained,
                          "rss_mb": result["rss_mb"]})
            print(f"{held:>5} -> {size:>5} hosts: {rate(result['stamps']):6.2f} bundles/s between batches, "
                  f"{command_rate(result):6.2f} bundles/s over the command (first tenth "
                  f"{first:.2f}/s, last tenth {last:.2f}/s; command {result['wall_s']:.1f} s, of which start-up and "
                  f"close {overhead:.1f} s) | peak RSS {result['rss_mb']:.0f} MB | warehouse "
                  f"{db.stat().st_size / 2**20:.1f} MB = {db.stat().st_size / size / 1024:.0f} KB per bundle | {busy(result)}",
                  flush=True)
            held = size
        again = ingest(db, *folders)
        assert set(again["actions"]) == {"unchanged"}, again["actions"][:5]
        skip = rate(again["stamps"])
        skip = command_rate(again) if skip != skip else skip
        print(f"re-ingest of {held} unchanged bundles: skipped at {skip:.0f} bundles/s between batches, "
              f"{command_rate(again):.0f}/s over the command ({again['wall_s']:.1f} s) | peak RSS {again['rss_mb']:.0f} MB | {busy(again)}", flush=True)

        pair = [build(arguments.bundle, work / f"pair-{half}", held + half * 50, 50) for half in (0, 1)]
        started = time.perf_counter()
        both = [subprocess.Popen([sys.executable, "-m", "fleetscope", "ingest", str(folder), "--db", str(db),
                                  "--lock-wait", "600"], stdout=subprocess.DEVNULL, cwd=ROOT) for folder in pair]
        codes = [process.wait() for process in both]
        together = time.perf_counter() - started
        print(f"two ingest processes of 50 bundles each, started together at {held} hosts: both done in "
              f"{together:.1f} s = {100 / together:.2f} bundles/s (exit {codes}; the second waits for the "
              "first's write lock)", flush=True)
        held += 100

        workers = build(arguments.bundle, work / "jobs", held, 100)
        result = ingest(db, workers, jobs=arguments.jobs)
        print(f"--jobs {arguments.jobs} (worker processes open, validate and parse; this one derives and writes), 100 bundles at "
              f"{held} hosts: {rate(result['stamps']):.2f} bundles/s between batches, {command_rate(result):.2f}/s over "
              f"the command ({result['wall_s']:.1f} s) | peak "
              f"RSS of the writer {result['rss_mb']:.0f} MB | {busy(result)} (the writer's)", flush=True)
        held += 100

        times = time_queries(db)
        for name, seconds in times.items():
            print(f"query {name:<20} {seconds * 1000:7.1f} ms at {held} hosts", flush=True)
        first_name, first_query = readme_queries()[0]
        print(f"`fleetscope query` of {first_name} as a user runs it (process start included): "
              f"{cli_query_s(db, first_query):.2f} s", flush=True)
    finally:
        if arguments.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f} (1 min), {os.getloadavg()[1]:.1f} (5 min): other "
          "processes share the CPUs when it is above 0", flush=True)
    rates = [step["rate"] for step in steps]
    print("targets: "
          f">= {RATE_TARGET:g} bundles/s: {'met' if min(rates) >= RATE_TARGET else 'MISSED'} "
          f"({' / '.join(f'{r:.1f}' for r in rates)} at {' / '.join(str(s['size']) for s in steps)} hosts); "
          f"flat (last size within 20% of the first): {'met' if rates[-1] >= 0.8 * rates[0] else 'MISSED'}; "
          f"peak RSS {' / '.join(str(round(step['rss_mb'])) for step in steps)} MB; "
          f"skip >= {SKIP_TARGET:g}/s: {'met' if skip >= SKIP_TARGET else 'MISSED'} ({skip:.0f}/s); "
          f"queries <= {QUERY_TARGET_S * 1000:g} ms: "
          f"{'met' if max(times.values()) <= QUERY_TARGET_S else 'MISSED'} (slowest {max(times.values()) * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
