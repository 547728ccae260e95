"""Helpers for the kernel tests (fixtures are in conftest.py)."""

import json
import os
import platform
import resource
from functools import cache
from pathlib import Path

import jsonschema

# Fast settings for runs whose numbers are not the point of the test.
QUICK = ["--samples", "1", "--min-sample-ms", "1"]
POINT_SCHEMA = Path(__file__).resolve().parents[2] / "fleetscope" / "schemas" / "point.schema.json"


def host_isas():
    """The bandwidth loops this CPU runs, narrowest first, from /proc/cpuinfo's flags (x86) or Features
    (Arm), read here rather than asked of the kernel; plain C (`scalar`) everywhere."""
    flags = next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.split(":")[0].strip() in ("flags", "Features")), [])
    vector = {"x86_64": [("sse2", "sse2"), ("avx2", "avx2"), ("avx512", "avx512f")],
              "aarch64": [("neon", "asimd"), ("sve", "sve")]}.get(platform.machine(), [])
    return ["scalar"] + [isa for isa, flag in vector if flag in flags]


def reject_non_finite(token):
    raise ValueError(f"non-finite number {token} in JSON output")


def parse_lines(text):
    return [json.loads(line, parse_constant=reject_non_finite) for line in text.splitlines()]


@cache
def point_validator():
    """The bundle's point schema (what ingest checks every results line against), read from its file."""
    schema = json.loads(POINT_SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def schema_problems(record):
    """Every way one kernel record breaks the point schema, as readable lines (empty: it is valid)."""
    return [f"{'/'.join(map(str, error.absolute_path)) or '$'}: {error.message}"
            for error in point_validator().iter_errors(record)]


def _busy_and_total_ticks():
    """/proc/stat's first line: (ticks every CPU spent busy, ticks in all), idle and iowait not busy."""
    with open("/proc/stat") as stat:
        values = [int(value) for value in stat.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)


class OtherLoad:
    """How many CPUs processes other than this one and its children kept busy during a `with` block
    (from /proc/stat, less this process tree's own CPU time): a test whose claim needs free CPUs skips,
    naming this, rather than fail on a machine others are using."""

    def __enter__(self):
        self._ticks = _busy_and_total_ticks()
        self._own = self._own_cpu_s()
        return self

    def __exit__(self, *exc):
        busy, total = _busy_and_total_ticks()
        hz = os.sysconf("SC_CLK_TCK")
        cpus = os.cpu_count() or 1
        wall_s = max((total - self._ticks[1]) / hz / cpus, 1e-9)
        other_s = max(0.0, (busy - self._ticks[0]) / hz - (self._own_cpu_s() - self._own))
        self.cpus = other_s / wall_s
        return False

    @staticmethod
    def _own_cpu_s():
        usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        return sum(u.ru_utime + u.ru_stime for u in usage)
