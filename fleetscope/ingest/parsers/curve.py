"""A latency or TLB curve as CSV (`bytes,ns` or `pages,ns`, optional `std`): the file a reference host's
bundle keeps verbatim (`fleetscope import curve`), read by the same code as `fleetscope infer --csv`
(parse_curve here; fleetscope.ingest.curve_csv infers and prints), so a bundle's copy is held to the
same FILE:LINE checks as the user's file.

parse() -> {"tool": "curve", "source": str, "kind": "bytes" | "pages", "relative": bool, "relative_because": str | None,
            "points": [{"size", "ns", "std"}]}   (size: bytes or pages, as `kind` says; std None when absent)
A curve whose smallest sizes read 0 is read as relative (ns over L1), as `infer --csv` reads it.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass

from fleetscope.ingest.parsers import ParseError, sample, split_lines, text_table


class CurveCsvError(ParseError):
    """The CSV cannot be read as a curve; str() starts with FILE:LINE (a ParseError, as every raw output's)."""


@dataclass(frozen=True)
class Curve:
    source: str
    kind: str                # 'bytes' or 'pages'
    sizes: list[int]
    ns: list[float]
    std: list[float] | None
    relative: bool = False   # ns over L1: stated, or read from a smallest size at 0 ns (see `note`)
    note: str | None = None


def _number(text: str, column: str, where: tuple[str, int], positive: bool = True) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CurveCsvError(*where, f"{column} {text!r} is not a number") from None
    if not math.isfinite(value) or (positive and value <= 0):
        raise CurveCsvError(*where, f"{column} must be a positive number, not {text!r}")
    return value


def parse_curve(text: str, path: str, relative: bool = False) -> Curve:
    """Parse a curve's CSV text; raise CurveCsvError naming the file (`path`) and line of the first problem.
    `relative`: ns are over L1, so zero and below are values, not errors (a bytes,ns curve whose smallest size
    reads 0 is read so too)."""
    lines = [(number, line) for number, line in enumerate(split_lines(text), start=1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise CurveCsvError(path, 1, "empty: expected a header such as 'bytes,ns' or 'pages,ns'")
    header_line, header_text = lines[0]
    header = [name.strip().lower() for name in next(csv.reader([header_text]))]
    kinds = [kind for kind in ("bytes", "pages") if kind in header]
    if len(kinds) != 1 or "ns" not in header:
        raise CurveCsvError(path, header_line, "the header must name 'ns' and one of 'bytes' or 'pages' "
                            f"(optional 'std'); found {','.join(header)!r}")
    kind = kinds[0]
    size_column, ns_column = header.index(kind), header.index("ns")
    std_column = header.index("std") if "std" in header else None
    if relative and kind == "pages":
        raise CurveCsvError(path, header_line, "a relative curve must be a bytes,ns curve (a pages,ns curve's "
                            "costs are read above its first plateau already)")
    sizes, ns, std, not_positive = [], [], [], []
    rows = _rows(lines[1:], path)
    for (number, _unused), row in zip(lines[1:], rows):
        where = (path, number)
        if len(row) < len(header):
            raise CurveCsvError(*where, f"{len(row)} fields, the header has {len(header)}")
        size = _number(row[size_column].strip(), kind, where)
        if size != int(size):
            raise CurveCsvError(*where, f"{kind} must be a whole number, not {row[size_column].strip()!r}")
        sizes.append(int(size))
        ns.append(_number(row[ns_column].strip(), "ns", where, positive=kind == "pages"))
        if ns[-1] <= 0:
            not_positive.append((where, int(size), row[ns_column].strip()))
        if std_column is not None:
            spread = row[std_column].strip()
            try:
                std.append(float(spread))
            except ValueError:
                raise CurveCsvError(*where, f"std {spread!r} is not a number") from None
            if not math.isfinite(std[-1]) or std[-1] < 0:
                raise CurveCsvError(*where, f"std must be zero or more, not {spread!r}")
    if len(set(sizes)) < 2:
        raise CurveCsvError(path, lines[-1][0], f"{len(set(sizes))} distinct {kind} values: a curve needs two or more")
    note = None
    if not_positive and not relative:
        # a relative curve's first plateau reads 0: every non-positive row lies below every positive one
        first_positive = min((size for size, value in zip(sizes, ns) if value > 0), default=math.inf)
        where, _unused, value_text = next((row for row in not_positive if row[1] > first_positive), (None, None, None))
        if where is not None:
            raise CurveCsvError(*where, f"ns must be a positive number, not {value_text!r} (a relative curve, ns over "
                                "L1, reads 0 only on its first plateau; say --relative if the curve is relative)")
        relative = True
        note = (f"read as relative (ns over L1, as tinymembench prints): its sizes up to "
                f"{max(row[1] for row in not_positive)} bytes read 0 or less")
    return Curve(path, kind, sizes, ns, std if std_column is not None else None, relative, note)


def _rows(lines: list[tuple[int, str]], path: str) -> Iterator[list[str]]:
    """The CSV rows of the lines after the header; a row the csv module refuses (a field over its 128 KiB
    limit, a NUL) is an error naming its line."""
    reader = csv.reader(io.StringIO("\n".join(line for _unused, line in lines)))
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise CurveCsvError(path, lines[min(reader.line_num, len(lines)) - 1][0], f"not a CSV row ({error})") from None


def parse(text: str, source: str = "<input>") -> dict:
    curve = parse_curve(text, source)
    spreads = curve.std if curve.std is not None else [None] * len(curve.sizes)
    return {"tool": "curve", "source": source, "kind": curve.kind, "relative": curve.relative, "relative_because": curve.note,
            "points": [{"size": size, "ns": ns, "std": std} for size, ns, std in zip(curve.sizes, curve.ns, spreads)]}


def rows(parsed: dict) -> list[dict]:
    size_key = "working_set_bytes" if parsed["kind"] == "bytes" else "pages"
    metric = "latency_over_l1" if parsed["relative"] else "latency"
    return [sample(metric, point["ns"], "ns", **{size_key: point["size"], "std_ns": point["std"]})
            for point in parsed["points"]]


def table(parsed: dict) -> list[str]:
    what = "ns over L1" if parsed["relative"] else "ns"
    out = [f"curve: {len(parsed['points'])} rows, {parsed['kind']} vs {what}"
           + (f" ({parsed['relative_because']})" if parsed["relative_because"] else "")]
    return out + text_table([parsed["kind"], what, "std"], [[point["size"], point["ns"], point["std"]]
                                                            for point in parsed["points"]])
