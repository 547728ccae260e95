"""Parsers of the raw outputs a host brings home in its bundle's raw/ folder.

One module per tool of TOOLS (mlc, fio, perf, diskspd, curve: a latency or TLB curve as CSV, and perf_report:
where a perf record's samples fell, per function), each with
the same functions:

    parse(text, source="<input>") -> dict     what the tool printed, as JSON-serialisable data
    rows(parsed) -> list[dict]                the same numbers flattened to long format
    table(parsed) -> list[str]                the lines `fleetscope parse` prints for people

Every long-format row is {"metric": str, "value": int | float, "unit": str, "params": {...}}: one
measured number, its unit spelled out ("ns", "MB/s" = 1e6 B/s, "B/s", "iops", "count", ...) and the
parameters that identify it (flat scalars), ready to load as warehouse samples.

Anything a parser cannot read raises ParseError("FILE:LINE: what is wrong"); a parser never turns
an unreadable field into a zero. This module holds what the parsers share: the error, number and
line handling, and reading a file whatever its encoding (Windows tools write UTF-16 or a BOM).
"""

from __future__ import annotations

import importlib
import math
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import ModuleType

from fleetscope.errors import UserError

TOOLS = ("mlc", "fio", "perf", "diskspd", "curve", "perf_report")

_INTEGER = re.compile(r"[+-]?\d+")
# no "nan", "inf" or "1_000"; possessive, so "1111...1x" is refused in one pass (the integer part and the
# fraction's digits could split a run of digits every way, quadratic in its length)
_DECIMAL = re.compile(r"[+-]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][+-]?\d++)?")


class ParseError(UserError):
    """A raw output the parser cannot read; str() is 'FILE:LINE: what is wrong'."""

    def __init__(self, source: str, line: int | None, message: str):
        self.source = source
        self.line = line
        self.message = message
        super().__init__(f"{source}:{line}: {message}" if line is not None else f"{source}: {message}")


def split_lines(text: str) -> list[str]:
    """The lines of a text without their ends (\\n, \\r\\n or \\r), a leading BOM removed."""
    return text.removeprefix("\ufeff").splitlines()


def is_number(text: str) -> bool:
    """True for a plain decimal number (what `number` accepts)."""
    return bool(_DECIMAL.fullmatch(text.strip()))


def number(text: str, source: str, line: int | None, what: str) -> int | float:
    """An int when the text is a plain integer, else a finite float; ParseError naming `what` if neither."""
    stripped = text.strip()
    if _INTEGER.fullmatch(stripped):
        # a count beyond 64 bits is no tool's (the warehouse cannot hold it, and a parser's arithmetic on
        # it overflows a float); checked on the digits, before int() parses thousands of them
        if len(stripped.lstrip("+-").lstrip("0")) > 20 or not -(2**63) <= (value := int(stripped)) < 2**64:
            raise ParseError(source, line, f"{what}: {stripped[:40]!r}{'...' if len(stripped) > 40 else ''} "
                                           "does not fit in 64 bits")
        return value
    if not _DECIMAL.fullmatch(stripped):
        raise ParseError(source, line, f"{what}: expected a number, found {stripped[:120]!r}")
    value = float(stripped)
    if not math.isfinite(value):
        raise ParseError(source, line, f"{what}: {stripped!r} does not fit in a double")
    return value


def scaled(value: int | float | str, factor: int | float) -> int | float:
    """value × factor computed in decimal, so 0.066 ms × 1e6 is 66000 ns and not 66000.00000000001."""
    try:
        product = Decimal(str(value)) * Decimal(str(factor))
    except InvalidOperation:
        raise ValueError(f"not a number: {value!r}") from None
    return int(product) if product == product.to_integral_value() else float(product)


def sample(metric: str, value: int | float, unit: str, **params: object) -> dict:
    """One long-format row; params with the value None are left out."""
    return {
        "metric": metric,
        "value": value,
        "unit": unit,
        "params": {key: param for key, param in params.items() if param is not None},
    }


def decode(data: bytes) -> str:
    """Text of a raw output file: UTF-16 (PowerShell's `>`), UTF-8 with or without BOM, else Latin-1."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    if len(data) >= 4 and data[1] == 0 and data[3] == 0 and data[0] != 0:  # UTF-16-LE without a BOM
        return data.decode("utf-16-le")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # a Windows code page: every byte maps, digits stay digits


def read_text(path: Path) -> str:
    try:
        return decode(path.read_bytes())
    except OSError as error:
        raise ParseError(str(path), None, f"cannot read the file: {error.strerror or error}") from None


def parser(tool: str) -> ModuleType:
    """The parser module of `tool` (one of TOOLS)."""
    if tool not in TOOLS:
        raise ValueError(f"no parser for {tool!r}; known: {', '.join(TOOLS)}")
    return importlib.import_module(f"fleetscope.ingest.parsers.{tool}")


def parse_file(tool: str, path: Path) -> dict:
    return parser(tool).parse(read_text(path), source=str(path))


def text_table(headers: list[str], body: list[list[object]], indent: str = "  ") -> list[str]:
    """Aligned plain-text columns (numbers right-aligned) for the CLI's table format."""
    cells = [[_cell(value) for value in row] for row in body]
    widths = [max(len(str(header)), *(len(row[i]) for row in cells)) for i, header in enumerate(headers)]
    numeric = [all(_is_numeric(row[i]) for row in body) and bool(body) for i in range(len(headers))]

    def render(row: list[str]) -> str:
        parts = [cell.rjust(width) if right else cell.ljust(width) for cell, width, right in zip(row, widths, numeric)]
        return (indent + "  ".join(parts)).rstrip()

    return [render([str(header) for header in headers]), *(render(row) for row in cells)]


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def _is_numeric(value: object) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))
