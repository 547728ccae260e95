"""`fleetscope infer --csv`: read a user's latency curve from CSV and print what fleetscope infers from it.

A header names the columns, in any order and case: `bytes,ns` (latency vs working set: cache levels) or
`pages,ns` (ns per access vs pages touched: TLB levels), optionally `std` (the spread of `ns`, same unit).
Other columns are ignored, lines starting with '#' are comments, and several rows of one size are that
size's samples (the inference takes their minimum). Anything else is an error naming the file and line.
A `bytes,ns` curve may be relative (ns over L1, as tinymembench prints): stated by the user, or read so
when its smallest size measures 0 ns.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from fleetscope.analyze.inference import (INFERENCE_VERSION, CacheCurve, CurveReading, TlbLevels, infer_cache_levels,
                                          infer_tlb, placement_of)
from fleetscope.ingest.parsers import ParseError, split_lines
from fleetscope.units import format_count_bracket, format_size
from fleetscope.analyze.plausibility import check_inferred_levels

NOISY_SHARE = 0.10  # std of 10% of the value: pyperf's warning level


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


def read_curve(path: Path, relative: bool = False) -> Curve:
    """Parse the CSV file at `path` (see parse_curve)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise CurveCsvError(str(path), None, f"cannot read it ({error})") from None
    return parse_curve(text, str(path), relative)


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
    rows = csv.reader(io.StringIO("\n".join(line for _unused, line in lines[1:])))
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


def infer_curve(curve: Curve, reading: CurveReading, cache_sizes: list[int]) -> CacheCurve | TlbLevels:
    """What the ingest's method infers from `curve`, read as `reading` says (relative when the curve is)."""
    if curve.kind == "bytes":
        reading = CurveReading(reading.pattern, reading.page_bytes, reading.relative or curve.relative)
        # sizes the user gives for a curve of another tool's are the CPU's published ones
        placement = replace(placement_of(reading), stated_source="published")
        return infer_cache_levels(curve.sizes, curve.ns, sysfs_sizes=cache_sizes, reading=reading, placement=placement)
    weights = None
    if curve.std is not None and all(spread > 0 for spread in curve.std):
        weights = [1 / spread**2 for spread in curve.std]
    return infer_tlb(curve.sizes, curve.ns, weights=weights)


def noisy_sizes(curve: Curve) -> list[int]:
    if curve.std is None:
        return []
    return sorted({size for size, value, spread in zip(curve.sizes, curve.ns, curve.std) if spread >= NOISY_SHARE * value})


def _size(value: int | None) -> str:
    from fleetscope.units import format_bytes

    return "-" if value is None else format_bytes(value)


def _number_text(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def render(curve: Curve, reading: CurveReading, result: CacheCurve | TlbLevels, output_format: str) -> str:
    noisy = noisy_sizes(curve)
    flags = []
    if isinstance(result, CacheCurve):
        flags = check_inferred_levels(result.levels, result.sizes[-1], result.relative)
    if output_format == "json":
        document = {"source": curve.source, "kind": "cache_levels" if curve.kind == "bytes" else "tlb",
                    "inference_version": INFERENCE_VERSION, **asdict(result), "noisy_sizes": noisy,
                    "reading": {**asdict(reading), "relative": reading.relative or curve.relative,
                                "relative_because": curve.note}, "flags": list(map(asdict, flags))}
        return json.dumps(document, indent=2) + "\n"
    lines = [f"{curve.source}: {len(set(curve.sizes))} {curve.kind} values, inference method {INFERENCE_VERSION}"]
    notes = [curve.note] if curve.note else []
    if isinstance(result, CacheCurve):
        lines[0] += f", pattern {reading.pattern}, {_size(reading.page_bytes)} pages"
        latency = "latency ns over L1" if result.relative else "latency ns"
        table = [("level", latency, "size", "rise [onset, completion]", "confidence", "plateau", "reported", "note")]
        for level in result.levels:
            size = format_size(level.size_low_bytes, level.size_high_bytes, level.capacity_bytes, level.size_method)
            table.append((level.level, _number_text(level.latency_ns), size or "-",
                          f"[{_size(level.onset_bytes)}, {_size(level.completion_bytes)}]", level.confidence or "-",
                          f"{_size(level.plateau_first_bytes)} .. {_size(level.plateau_last_bytes)}",
                          _size(level.sysfs_size_bytes), level.note or ""))
        widths = [max(len(row[column]) for row in table) for column in range(len(table[0]))]
        lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]
        notes += result.notes
        if result.set_aside_bytes:
            notes.append(f"set aside as dips: {', '.join(_size(size) for size in result.set_aside_bytes)}")
        notes.append("cycles: the CSV carries no core clock")
    else:
        lines += [f"L1 TLB: {format_count_bracket(result.l1_low_pages, result.l1_high_pages, result.l1_entries) or '-'} "
                  f"entries (step from {_number_text(result.l1_onset_pages)} to {_number_text(result.l1_completion_pages)} "
                  f"pages), a miss costs {_number_text(result.l1_miss_ns)} ns",
                  f"L2 TLB: {format_count_bracket(result.l2_low_pages, result.l2_high_pages, result.l2_entries) or '-'} "
                  f"entries (step from {_number_text(result.l2_onset_pages)} to {_number_text(result.l2_completion_pages)} "
                  f"pages), a page walk costs {_number_text(result.walk_ns)} ns"]
        notes += [result.note] if result.note else []
    if noisy:
        notes.append(f"noisy (std >= {NOISY_SHARE:.0%} of ns): {', '.join(map(str, noisy))} {curve.kind}")
    lines += [f"note: {note}" for note in notes]
    lines += [f"flag {flag.status}: {flag.rule}: {flag.evidence or flag.reason}" for flag in flags]
    return "\n".join(lines) + "\n"


def kernel_jsonl_to_csv(path: Path, page_policy: str | None = None) -> str:
    """A CSV for `fleetscope infer --csv` from a kernel's JSON lines (`fleetscope-kernels chase|tlb -o FILE`), to
    check the inference on a machine without running Ansible: chase -> bytes,ns,std (ns the point's minimum);
    tlb -> pages,ns with ns = the control chain's L1 latency + the paired TLB-minus-control difference, as ingest
    computes it."""
    import statistics

    points = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    chase = [point for point in points if point["kernel"] in ("chase", "zero_queue") and
             (page_policy is None or point["params"].get("page_policy") == page_policy)]
    if chase:
        rows = sorted((point["params"]["working_set_bytes"], point["summary"]["min"],
                       statistics.stdev(point["samples"]) if len(point["samples"]) > 1 else 0.0) for point in chase)
        return "bytes,ns,std\n" + "".join(f"{size},{ns!r},{std!r}\n" for size, ns, std in rows)
    tlb = [point for point in points if point["kernel"] == "tlb" and
           (page_policy is None or point["params"].get("page_size") == page_policy)]
    if not tlb:
        raise CurveCsvError(str(path), None,
                            f"no chase or tlb points{' with page policy ' + page_policy if page_policy else ''}")
    control = {point["params"]["pages"]: point["summary"]["min"] for point in tlb if point["params"]["chain"] == "control"}
    l1_ns = control[min(control)]
    rows = sorted((point["params"]["pages"], l1_ns + max(point["context"]["paired_difference_median_ns"], -l1_ns / 2))
                  for point in tlb if point["params"]["chain"] == "tlb")
    return "pages,ns\n" + "".join(f"{pages},{ns!r}\n" for pages, ns in rows)


if __name__ == "__main__":
    import sys

    sys.stdout.write(kernel_jsonl_to_csv(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
