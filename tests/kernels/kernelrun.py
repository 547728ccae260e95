"""Helpers for the kernel tests (fixtures are in conftest.py)."""

import json

# Fast settings for runs whose numbers are not the point of the test.
QUICK = ["--samples", "1", "--min-sample-ms", "1"]


def reject_non_finite(token):
    raise ValueError(f"non-finite number {token} in JSON output")


def parse_lines(text):
    return [json.loads(line, parse_constant=reject_non_finite) for line in text.splitlines()]
