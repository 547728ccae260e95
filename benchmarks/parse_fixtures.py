#!/usr/bin/env python3
"""Time the raw-output parsers on every fixture: best of N parses per file, totals per tool.

Usage: benchmarks/parse_fixtures.py [--repeats 20] [--rows] [--files]

Fixtures: ../shared/fixtures/{mlc,fio,perf}_samples and tests/fixtures/{diskspd,fio,perf_samples} (perf stat
outputs to the perf parser, perf report profiles to perf_report). Each file is
read once; the timing covers parse() (and rows() too with --rows) on the decoded text, so it is
parsing speed, not disk speed. Best of N is the least disturbed run on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from fleetscope.ingest.parsers import decode, parser, perf_report  # noqa: E402

SHARED = PROJECT.parent / "shared" / "fixtures"
FIXTURES = {
    "mlc": [SHARED / "mlc_samples"],
    "fio": [SHARED / "fio_samples", PROJECT / "tests" / "fixtures" / "fio"],
    "perf": [SHARED / "perf_samples"],
    "perf_report": [SHARED / "perf_samples", PROJECT / "tests" / "fixtures" / "perf_samples"],
    "diskspd": [PROJECT / "tests" / "fixtures" / "diskspd"],
}


def fixture_files(tool: str) -> list[Path]:
    files = []
    for directory in FIXTURES[tool]:
        if not directory.is_dir():
            raise SystemExit(f"parse_fixtures: {directory} is missing (the shared fixtures sit beside the repository)")
        files += sorted(path for path in directory.iterdir() if path.is_file() and path.name != "SOURCES.md")
    if tool in ("perf", "perf_report"):  # perf_samples holds perf stat outputs and perf report profiles
        report = {path for path in files if perf_report.looks_like(decode(path.read_bytes()))}
        files = sorted({path.name: path for path in files
                        if (path in report) == (tool == "perf_report")}.values())
    return files


def best_of(repeats: int, work) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--repeats", type=int, default=20, help="parses per file; the fastest counts (default 20)")
    arguments.add_argument("--rows", action="store_true", help="also time rows() (the long-format flattening)")
    arguments.add_argument("--files", action="store_true", help="print every file's time, not only the totals")
    options = arguments.parse_args()

    print(f"best of {options.repeats}, python {sys.version.split()[0]}")
    print(f"{'tool':<8} {'files':>5} {'bytes':>9} {'rows':>6} {'total ms':>9} {'MB/s':>7}")
    for tool in FIXTURES:
        module = parser(tool)
        total_s = 0.0
        total_bytes = total_rows = 0
        for path in fixture_files(tool):
            text = decode(path.read_bytes())

            def work(text: str = text, name: str = path.name) -> None:
                parsed = module.parse(text, source=name)
                if options.rows:
                    module.rows(parsed)

            seconds = best_of(options.repeats, work)
            samples = len(module.rows(module.parse(text, source=path.name)))
            total_s += seconds
            total_bytes += len(text.encode())
            total_rows += samples
            if options.files:
                print(f"  {path.name:<62} {seconds * 1e3:8.3f} ms  {samples:5d} rows")
        rate = total_bytes / total_s / 1e6 if total_s else 0.0
        print(f"{tool:<8} {len(fixture_files(tool)):>5} {total_bytes:>9} {total_rows:>6} {total_s * 1e3:>9.2f} {rate:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
