"""`fleetscope query`: run one SQL statement against the warehouse (read-only) and print the result.

The statement must be one SELECT (or EXPLAIN of one): anything else is refused before DuckDB runs it,
and the connection it runs on (store.warehouse.open_read_only) can reach no file at all, so even a
SELECT that calls a file function (read_blob, read_text) of the warehouse's own files fails."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from datetime import date, datetime
from decimal import Decimal

import duckdb

from fleetscope.errors import UserError

FORMATS = ("table", "csv", "json")
# What a host sent may hold newlines, terminal escape sequences and bidirectional controls (which reorder
# what a terminal or a page shows, so a name reads as another): they are shown escaped.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029{_BIDI}]")
_CONTROL_BUT_LINES = re.compile(f"[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f{_BIDI}]")
# A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...), +cmd|...).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
READING_STATEMENTS = ("SELECT", "EXPLAIN")


def _escaped(match: re.Match) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: str) -> str:
    """Text from a host, fit for a terminal: control and bidirectional characters escaped (\\n, \\x1b,
    \\u202e, ...), one line."""
    return _CONTROL.sub(_escaped, text)


def visible(text: str) -> str:
    """Text from a host, fit for a page: as printable, but line breaks and tabs kept (HTML shows them as
    spaces); a NUL or a bidirectional override never reaches the page as itself."""
    return _CONTROL_BUT_LINES.sub(_escaped, text)


def reading_statement(connection: duckdb.DuckDBPyConnection, text: str):
    """The one statement of `text`, parsed by DuckDB, when it only reads (SELECT, EXPLAIN); else UserError
    saying what was given. An empty text, comments alone or semicolons alone are no statement."""
    try:
        statements = connection.extract_statements(text)
    except duckdb.Error as error:
        raise UserError(f"query failed: {error}") from None
    if not statements:
        raise UserError("no SQL statement given (only comments, blanks or semicolons)")
    if len(statements) > 1:
        raise UserError(f"one statement at a time: {len(statements)} were given")
    kind = statements[0].type.name
    if kind not in READING_STATEMENTS:
        raise UserError(f"query only reads: a {kind} statement is refused (the warehouse is opened read-only; "
                        "load bundles with `fleetscope ingest`, write Parquet with `fleetscope export`)")
    return statements[0]


def run(connection: duckdb.DuckDBPyConnection, text: str) -> tuple[list[str], list[tuple]]:
    """(column names, rows) of the one reading statement in `text`; UserError when it is not one, or when
    DuckDB fails while it runs or while its rows are fetched."""
    statement = reading_statement(connection, text)
    try:
        cursor = connection.execute(statement)
        columns = [description[0] for description in cursor.description or []]
        return columns, cursor.fetchall()
    except duckdb.Error as error:
        raise UserError(f"query failed: {error}") from None


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
        return float(value) if value.is_finite() else None
    return str(value)


def _finite(value: object) -> object:
    """A value with every NaN and infinity in it (nested lists, structs, maps too) as None: JSON has no
    NaN or Infinity, and a reader that is strict about JSON refuses the whole document for one."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _csv_cell(value: object) -> object:
    """A cell a spreadsheet shows as text: control characters escaped, and a text that would start a
    formula (=, +, -, @, tab, return) led by an apostrophe, as OWASP's CSV injection advice says."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    text = printable(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


TEXT_COLUMN_MAX = 120


def render(columns: list[str], rows: list[tuple], output_format: str) -> str:
    """The result as an aligned text table, CSV (RFC 4180) or a JSON array of objects (NaN and infinities
    as null)."""
    if output_format == "json":
        records = [dict(zip(columns, _finite(list(row)))) for row in rows]
        return json.dumps(records, indent=2, default=_json_value, allow_nan=False) + "\n"
    if output_format == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([_csv_cell(column) for column in columns])
        writer.writerows([_csv_cell(value) for value in row] for row in rows)
        return buffer.getvalue()
    texts = [[_cell_text(value) for value in row] for row in rows]
    # a column is padded to its widest cell up to TEXT_COLUMN_MAX: one long note (a host's text) would pad every
    # other row to its length, an output as large as the rows times that cell
    widths = [min(max([len(name)] + [len(row[index]) for row in texts]), TEXT_COLUMN_MAX)
              for index, name in enumerate(columns)]
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
