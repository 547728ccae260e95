"""Helpers for the kernel tests (fixtures are in conftest.py)."""

import json
import platform
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

