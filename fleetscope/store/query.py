"""`fleetscope query`: run one SQL statement against the warehouse (read-only) and print the result."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import date, datetime
from decimal import Decimal

FORMATS = ("table", "csv", "json")
# What a host sent may hold newlines and terminal escape sequences: a table shows them escaped.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """Text from a host, fit for a terminal: control characters escaped (\\n, \\x1b, ...), one line."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return printable(str(value))


def _json_value(value: object) -> object:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def render(columns: list[str], rows: list[tuple], output_format: str) -> str:
    """The result as an aligned text table, CSV (RFC 4180) or a JSON array of objects."""
    if output_format == "json":
        records = [dict(zip(columns, row)) for row in rows]
        return json.dumps(records, indent=2, default=_json_value) + "\n"
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(["" if value is None else value for value in row] for row in rows)
        return buffer.getvalue()
    texts = [[_cell_text(value) for value in row] for row in rows]
    widths = [max([len(name)] + [len(row[index]) for row in texts]) for index, name in enumerate(columns)]
    numeric = [
        bool(rows) and all(isinstance(row[index], (int, float, Decimal)) or row[index] is None for row in rows)
        for index in range(len(columns))
    ]

    def line(cells: list[str]) -> str:
        padded = [
            cell.rjust(width) if is_number else cell.ljust(width)
            for cell, width, is_number in zip(cells, widths, numeric)
        ]
        return "  ".join(padded).rstrip()

    output = [line(columns), line(["-" * width for width in widths])]
    output.extend(line(row) for row in texts)
    output.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(output) + "\n"
