#!/usr/bin/env python3
"""Peak memory and time of `fleetscope ingest` for bundles of 1, 10 and 100 MB and one point of
2 million samples (issue 14's targets: memory proportional to the bundle, at most 10x its size, and
the 2 M-sample point in at most 5 s).

Usage: benchmarks/ingest_limits.py [--repeats 3] [--template BUNDLE] [--baseline-src DIR] [--keep DIR]

Each case is a real `fleetscope ingest` into a fresh warehouse, run as a child process; its peak RSS
comes from wait4() (the bundles are written by a forked child first, so the measuring process stays
small: Linux counts the RSS a child had before exec in its peak). Memory is reported as the growth
over the same command ingesting a minimal
bundle (the interpreter, DuckDB and the imports: the floor every ingest pays), divided by the bundle's
bytes. Cases are interleaved within each repeat and the median of the repeats is printed beside the
fastest, so a busy machine shows as spread rather than as a wrong figure.

Bundles: the sized ones hold latency-sweep points as the chase kernel writes them (11 samples each,
about 800 bytes a line), or, with --template, the results files of a real bundle (e.g. one `make run`
brought home) repeated to the size; the 2 M point is one line of 2 000 000 samples of the form
1.25 (about 10 MB, as in the issue). --baseline-src runs the same command with another checkout's fleetscope (e.g.
`git archive <rev> | tar -x -C DIR`) for the cases that checkout can survive (the minimal and 1 MB
bundles and the template itself), and prints new/old ratios of time and peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
RUN_ID = "20261122T034500Z-a1b2c3"
MB = 10**6
TARGET_RATIO = 10.0
TARGET_BIG_POINT_S = 5.0
LATENCY_EXPERIMENT = [{"name": "latency_sweep", "status": "ok", "file": "results/latency_sweep.jsonl"}]


def _manifest(host: str, experiments: list[dict]) -> dict:
    return {
        "bundle_schema": 1, "run_id": RUN_ID, "host": host, "profile": "quick",
        "started_at": "2026-11-22T03:45:00Z", "finished_at": "2026-11-22T03:47:10Z", "status": "complete",
        "fleetscope": {"version": "0.1.0", "git_sha": "bench"},
        "facts": {"hostname": host, "cpu": {"model_name": "bench", "logical_cpus": 2},
                  "caches": [{"level": 1, "type": "Data", "size_bytes": 32768},
                             {"level": 2, "type": "Unified", "size_bytes": 1048576},
                             {"level": 3, "type": "Unified", "size_bytes": 33554432}],
                  "memory": {"mem_total_bytes": 25 * 10**9, "mem_available_bytes": 24 * 10**9},
                  "kernel": {"release": "6.1.0"}},
        "knobs": [], "experiments": experiments,
    }


def _chase_point(rng: random.Random, index: int, samples: int) -> dict:
    size = 2 ** (12 + index % 17)
    base = 1.2 if size <= 32768 else 4.2 if size <= 1 << 20 else 14.0 if size <= 3 << 20 else 160.0
    values = sorted(round(base * (1 + abs(rng.gauss(0, 0.02))), 4) for _ in range(samples))
    return {"schema_version": 1, "experiment": "latency_sweep", "kernel": "chase", "metric": "latency", "unit": "ns",
            "params": {"working_set_bytes": size, "stride_bytes": 64, "line_bytes": 64, "lines_touched": size // 64,
                       "pattern": "random_cycle", "page_policy": "thp" if index % 2 else "4k",
                       "huge_bytes_granted": 0, "walk": "sattolo", "chains": 1, "cpu": 0,
                       "accesses_per_sample": 1048576, "seed": 12345 + index},
            "samples": values,
            "summary": {"min": values[0], "median": values[len(values) // 2], "mean": statistics.fmean(values),
                        "ci95_low": values[0], "ci95_high": values[-1], "count": len(values)},
            "context": {"canary_before_ns": 1.0, "canary_after_ns": 1.0, "core_clock_ghz": 3.4,
                        "median_cycles": round(values[len(values) // 2] * 3.4, 3), "wall_s": 0.25,
                        "order_index": index}}


def _write(bundle: Path, experiments: list[dict], files: dict[str, bytes]) -> Path:
    (bundle / "results").mkdir(parents=True)
    for relative, data in files.items():
        (bundle / relative).write_bytes(data)
    (bundle / "manifest.json").write_text(json.dumps(_manifest(bundle.name, experiments), indent=2))
    return bundle


def synthetic_bundle(root: Path, host: str, size_bytes: int) -> Path:
    rng = random.Random(size_bytes)
    lines, total, index = [], 0, 0
    while total < size_bytes or not lines:
        line = (json.dumps(_chase_point(rng, index, 11)) + "\n").encode()
        lines.append(line)
        total += len(line)
        index += 1
    return _write(root / RUN_ID / host, LATENCY_EXPERIMENT,
                  {"results/latency_sweep.jsonl": b"".join(lines)})


def big_point_bundle(root: Path, host: str, samples: int) -> Path:
    rng = random.Random(samples)
    point = _chase_point(rng, 20, 11)
    point["samples"] = [round(1 + rng.random() * 8, 2) for _ in range(samples)]
    point["summary"]["count"] = samples
    return _write(root / RUN_ID / host, LATENCY_EXPERIMENT,
                  {"results/latency_sweep.jsonl": (json.dumps(point, separators=(",", ":")) + "\n").encode()})


def template_bundle(root: Path, host: str, template: Path, size_bytes: int | None) -> Path:
    """The template's manifest and files; its results files repeated until the bundle has size_bytes."""
    manifest = json.loads((template / "manifest.json").read_text())
    target = root / RUN_ID / host
    shutil.copytree(template, target)
    manifest.update(run_id=RUN_ID, host=host)
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2))
    results = sorted((target / "results").glob("*.jsonl"))
    current = sum(path.stat().st_size for path in target.rglob("*") if path.is_file())
    if size_bytes and results:
        originals = {path: path.read_bytes() for path in results}
        per_copy = sum(map(len, originals.values()))
        copies = max(1, (size_bytes - current) // per_copy + 1)
        for path, data in originals.items():
            path.write_bytes(data * (copies + 1))
    return target


def bundle_bytes(bundle: Path) -> int:
    return sum(path.stat().st_size for path in bundle.rglob("*") if path.is_file())


def ingest(bundle: Path, db: Path, source: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS bytes, last output line) of one `fleetscope ingest` into a fresh warehouse."""
    for stale in (db, Path(f"{db}.wal")):
        stale.unlink(missing_ok=True)
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "fleetscope", "ingest", str(bundle), "--db", str(db)],
                               cwd=source, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"ingest_limits: ingest of {bundle} failed ({process.returncode}):\n{output[-2000:]}")
    return elapsed, usage.ru_maxrss * 1024, output.strip().splitlines()[0][:100]


def main() -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--repeats", type=int, default=3, help="runs of every case, interleaved (default 3)")
    arguments.add_argument("--template", type=Path, help="a real bundle whose results files make the sized bundles")
    arguments.add_argument("--baseline-src", type=Path, help="another checkout to compare with (small cases only)")
    arguments.add_argument("--keep", type=Path, help="write the bundles here and keep them (default: a temp folder)")
    options = arguments.parse_args()

    root = options.keep or Path(tempfile.mkdtemp(prefix="ingest-limits-"))
    results = root / "results"
    if results.exists():
        shutil.rmtree(results)
    cases = {"minimal": results / RUN_ID / "minimal"}
    if options.template:
        cases["template"] = results / RUN_ID / "template"
    for megabytes in (1, 10, 100):
        cases[f"{megabytes} MB"] = results / RUN_ID / f"bundle-{megabytes}mb"
    cases["2 M-sample point"] = results / RUN_ID / "point-2m"
    writer = os.fork()
    if writer == 0:  # the bundles' text never inflates the measuring process
        synthetic_bundle(results, "minimal", 1)
        if options.template:
            template_bundle(results, "template", options.template, None)
        for megabytes in (1, 10, 100):
            if options.template:
                template_bundle(results, f"bundle-{megabytes}mb", options.template, megabytes * MB)
            else:
                synthetic_bundle(results, f"bundle-{megabytes}mb", megabytes * MB)
        big_point_bundle(results, "point-2m", 2_000_000)
        os._exit(0)
    if os.waitstatus_to_exitcode(os.waitpid(writer, 0)[1]) != 0:
        raise SystemExit("ingest_limits: writing the bundles failed")
    sources = {"new": PROJECT}
    if options.baseline_src:
        sources["old"] = options.baseline_src.resolve()
    survivable = {"minimal", "template", "1 MB"}

    runs: dict[tuple[str, str], list[tuple[float, int]]] = {}
    notes: dict[str, str] = {}
    for repeat in range(options.repeats):
        for name, bundle in cases.items():
            for label, source in sources.items():
                if label == "old" and name not in survivable:
                    continue
                elapsed, peak, note = ingest(bundle, root / f"{label}.duckdb", source)
                runs.setdefault((label, name), []).append((elapsed, peak))
                notes[name] = note
        print(f"repeat {repeat + 1} of {options.repeats} done", file=sys.stderr)

    floor = statistics.median(peak for _, peak in runs[("new", "minimal")])
    print(f"fleetscope ingest, {options.repeats} runs each, python {sys.version.split()[0]}, {os.cpu_count()} CPUs; "
          f"peak RSS of the minimal bundle (the floor): {floor / MB:.0f} MB")
    print(f"{'case':<18} {'bundle MB':>9} {'time s (med/min)':>17} {'peak MB':>8} {'over floor MB':>13} "
          f"{'x bundle':>8}  target")
    for name, bundle in cases.items():
        size = bundle_bytes(bundle)
        times = [elapsed for elapsed, _ in runs[("new", name)]]
        peak = statistics.median(peak for _, peak in runs[("new", name)])
        growth = max(peak - floor, 0)
        ratio = growth / size
        verdicts = []
        if name != "minimal":
            verdicts.append(f"memory {'met' if ratio <= TARGET_RATIO else 'MISSED'} (<= {TARGET_RATIO:g}x)")
        if name == "2 M-sample point":
            verdicts.append(f"time {'met' if statistics.median(times) <= TARGET_BIG_POINT_S else 'MISSED'} "
                            f"(<= {TARGET_BIG_POINT_S:g} s)")
        print(f"{name:<18} {size / MB:>9.2f} {statistics.median(times):>8.2f} /{min(times):>7.2f} {peak / MB:>8.0f} "
              f"{growth / MB:>13.1f} {ratio:>8.2f}  {', '.join(verdicts)}")
    if "old" in sources:
        print(f"\nagainst {sources['old']} (median of {options.repeats}; ratio new/old, below 1 is better):")
        for name in cases:
            if ("old", name) in runs:
                new_time = statistics.median(elapsed for elapsed, _ in runs[("new", name)])
                old_time = statistics.median(elapsed for elapsed, _ in runs[("old", name)])
                new_peak = statistics.median(peak for _, peak in runs[("new", name)])
                old_peak = statistics.median(peak for _, peak in runs[("old", name)])
                print(f"{name:<18} time {new_time:.2f} s / {old_time:.2f} s = {new_time / old_time:.2f}   "
                      f"peak {new_peak / MB:.0f} MB / {old_peak / MB:.0f} MB = {new_peak / old_peak:.2f}")
    for name, note in notes.items():
        print(f"  {name}: {note}")
    if not options.keep:
        shutil.rmtree(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
