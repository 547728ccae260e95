#!/usr/bin/env python3
"""Sweep every raw-output parser for input that costs more than linear time (issue 27): each line of each
real output in tests/fixtures is "pumped" — one run of spaces, digits, letters or punctuation in it
repeated to N characters, with and without a character appended that no pattern expects — and the
whole file is parsed again with that line in its place (a parser that then fails other than with
ParseError is reported too: `fleetscope parse` would print a traceback). A parser whose cost follows its input parses
each pumped file in about the time of the original; a pattern that backtracks shows as a case that
takes ~N times (quadratic) or ~N^2 times (cubic) longer. Prints the slowest cases and every case over
--limit seconds; exit status 1 when there is any.

Usage: benchmarks/pumped_lines.py [--chars 4000] [--limit 0.05] [--tool mlc ...]

A case is slow when it takes more than --limit seconds beyond ten times the original file's time (the
original's best of three), so a busy machine's noise is not taken for a pattern's cost; a slow case is
timed once more, and reported only if it is slow again.

This is the sweep that found the patterns issue 27 lists and those it did not (MLC's banner, separator
and ratio lines, fio's normal-output check, DiskSpd's file sizes, perf's split PMU events);
tests/unit/test_linear_time.py keeps the worst pattern of each as a timed case at 1 MiB.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from fleetscope.ingest.parsers import ParseError, decode, parser  # noqa: E402

FIXTURES = PROJECT / "tests" / "fixtures"
SOURCES = {
    "mlc": ["mlc_samples/*.txt"],
    "fio": ["fio/*.json", "fio_samples/*.json", "fio_samples/*.txt"],
    "perf": ["perf_samples/*.csv", "perf_samples/*.txt"],
    "diskspd": ["diskspd/*.txt", "diskspd/*.xml"],
    "curve": ["curves/*.csv"],
}
_RUN = re.compile(r" +|\t+|\d+|[A-Za-z]+|([^\sA-Za-z\d])\1*")
KILLERS = ("", "x", "(", "=", ":", "\x00")


def pumped(line: str, chars: int):
    """(what, line) for each run of one class in `line` repeated to `chars` characters, each with every
    killer appended."""
    for match in _RUN.finditer(line):
        unit = match.group()[0]
        for killer in KILLERS:
            yield (f"{match.group()[:8]!r}@{match.start()} x{chars}{' +' + repr(killer) if killer else ''}",
                   line[:match.start()] + unit * chars + killer + line[match.end():])


def timed_parse(tool: str, text: str) -> float:
    """Seconds to parse `text` and flatten it to rows; a parser that fails other than with ParseError
    (a traceback for `fleetscope parse`) is a finding too, reported as CRASH."""
    module = parser(tool)
    start = time.perf_counter()
    try:
        module.rows(module.parse(text, source="pumped"))
    except ParseError:
        pass
    except Exception as error:  # noqa: BLE001 - what the sweep is looking for
        raise Crash(f"{type(error).__name__}: {str(error)[:80]}") from None
    return time.perf_counter() - start


class Crash(Exception):
    pass


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--chars", type=int, default=4000)
    options.add_argument("--limit", type=float, default=0.05, help="seconds a pumped file may take (default 0.05)")
    options.add_argument("--tool", action="append", choices=sorted(SOURCES))
    arguments = options.parse_args()
    slow, crashes, cases = [], [], 0
    for tool in arguments.tool or sorted(SOURCES):
        files = sorted({path for pattern in SOURCES[tool] for path in FIXTURES.glob(pattern)})
        for path in files:
            lines = decode(path.read_bytes()).splitlines()
            original = min(timed_parse(tool, "\n".join(lines)) for _ in range(3))
            allowed = arguments.limit + 10 * original
            seen: set[str] = set()
            for index, line in enumerate(lines):
                for what, replaced in pumped(line, arguments.chars):
                    shape = re.sub(r"\d", "0", replaced)  # one case per shape: a table's rows are alike
                    if shape in seen:
                        continue
                    seen.add(shape)
                    cases += 1
                    text = "\n".join([*lines[:index], replaced, *lines[index + 1:]])
                    try:
                        took = timed_parse(tool, text)
                    except Crash as crash:
                        crashes.append(f"{tool} {path.relative_to(FIXTURES)}:{index + 1} {what}: {crash}")
                        print(f"CRASH {crashes[-1]}", flush=True)
                        continue
                    if took > allowed:
                        took = min(took, timed_parse(tool, text))
                    if took > allowed:
                        slow.append((took, tool, f"{path.relative_to(FIXTURES)}:{index + 1}", what))
                        print(f"SLOW {took:7.3f} s  {tool:8} {path.relative_to(FIXTURES)}:{index + 1}  {what}",
                              flush=True)
    print(f"{cases} pumped files of {arguments.chars} characters per run; {len(slow)} slow, {len(crashes)} crashed")
    for took, tool, where, what in sorted(slow, reverse=True)[:20]:
        print(f"  {took:7.3f} s  {tool:8} {where}  {what}")
    return 1 if slow or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
