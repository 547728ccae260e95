"""`fleetscope infer --csv`: read a user's latency curve from CSV and print what fleetscope infers from it.

A header names the columns, in any order and case: `bytes,ns` (latency vs working set: cache levels) or
`pages,ns` (ns per access vs pages touched: TLB levels), optionally `std` (the spread of `ns`, same unit).
Other columns are ignored, lines starting with '#' are comments, and several rows of one size are that
size's samples (the inference takes their minimum). Anything else is an error naming the file and line.
A `bytes,ns` curve may be relative (ns over L1, as tinymembench prints): stated by the user, or read so
when its smallest size measures 0 ns.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

from fleetscope.analyze.inference import (INFERENCE_VERSION, CacheCurve, CurveReading, TlbLevels, infer_cache_levels,
                                          infer_tlb, placement_of)
from fleetscope.ingest.parsers.curve import Curve, CurveCsvError, parse_curve
from fleetscope.units import format_count_bracket, format_size
from fleetscope.analyze.plausibility import check_inferred_levels

NOISY_SHARE = 0.10  # std of 10% of the value: pyperf's warning level


def read_curve(path: Path, relative: bool = False) -> Curve:
    """Parse the CSV file at `path` (see parse_curve)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise CurveCsvError(str(path), None, f"cannot read it ({error})") from None
    return parse_curve(text, str(path), relative)


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
