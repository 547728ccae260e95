"""Reference hosts: a published or legacy latency/TLB curve stored as a host of its own (origin `reference`), so
a lab compares its machines with CPUs it does not own (`fleetscope import curve`), and the small library of
published curves fleetscope ships (fleetscope/references/: library.json, the CSVs, their SOURCES.md), listed
by `fleetscope reference list` and loaded by `fleetscope reference load`.

A curve becomes a real bundle, results/<run_id>/<host>/, as `fleetscope import` makes one (fleetscope.ingest.imports):
the CSV kept verbatim as raw/curve/<file> (parsed again on ingest, with the same FILE:LINE checks as `infer
--csv`), its points as a `latency_sweep` (bytes,ns) or `tlb` (pages,ns, chain 'published') results file, and
the manifest's `reference` saying where it came from and how it was measured (the tool, pattern, page size,
relative, and the core clock where the source states one), which the ingest's inference and plausibility rules
read it by. Ingest, inference and the plausibility rules then treat it as any
run; pages, compare and outliers mark it as a reference (runs.origin). The run id comes from the host, the
CSV and its date, so loading the same curve again changes nothing, and a corrected --source or --cpu-model
replaces the run in place.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from fleetscope import __version__
from fleetscope.ingest.curve_csv import Curve, parse_curve
from fleetscope.errors import UserError
from fleetscope.ingest.imports import ImportedBundle, _run_id, _started_at, check_host, replace_bundle
from fleetscope.analyze.inference import PATTERNS, CurveReading
from fleetscope.ingest.parsers import decode
from fleetscope.resources import REFERENCES_DIR, sql

LIBRARY_DIR = REFERENCES_DIR
SUPPORTED_LIBRARY_SCHEMA = 1
MAX_SOURCE_CHARS = 2000  # the manifest schema's limit on `reference.source`
MAX_TOOL_CHARS = 200     # ... on `reference.tool`
MIN_CLOCK_GHZ, MAX_CLOCK_GHZ = 0.01, 10.0  # ... on `reference.clock_ghz`


@dataclass(frozen=True)
class Reference:
    """What the user (or the library) says about a curve: whose it is and how it was measured."""
    host: str
    cpu_model: str
    source: str
    reading: CurveReading
    caches: tuple[int, ...] = ()     # the CPU's published cache sizes, smallest level first (the 'reported' sizes)
    cpu_identity: tuple[tuple[str, object], ...] = ()  # vendor/family/model or implementer/parts, as facts.cpu has them
    name: str | None = None          # the library entry it came from
    notes: str | None = None
    tool: str | None = None          # what measured it (ramlat, tinymembench ...), as the source names it
    clock_ghz: float | None = None   # the core clock the source states it ran at (None: it states none)


@dataclass(frozen=True)
class LibraryEntry:
    reference: Reference
    file: Path
    kind: str      # bytes (a cache curve) | pages (a TLB curve)


def page_policy(page_bytes: int) -> str:
    """A curve's page policy as the pages show it: 4k, 16k, 2m, 1g."""
    for factor, suffix in ((1 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")):
        if page_bytes % factor == 0:
            return f"{page_bytes // factor}{suffix}"
    return f"{page_bytes}b"


def _summary(samples: list[float]) -> dict:
    # A published curve carries a value per size, not the tool's samples: the 'CI' is the range of the values
    # given for that size (one value: none), so nothing claims a precision the source did not give.
    return {"min": min(samples), "median": statistics.median(samples), "mean": statistics.fmean(samples),
            "ci95_low": min(samples), "ci95_high": max(samples), "count": len(samples)}


def _points(curve: Curve, reading: CurveReading, relative: bool) -> tuple[str, list[dict]]:
    """The curve as points of the experiment fleetscope's own curve of that kind is stored in."""
    by_size: dict[int, list[float]] = {}
    spread: dict[int, list[float]] = {}
    for index, (size, ns) in enumerate(zip(curve.sizes, curve.ns)):
        by_size.setdefault(size, []).append(ns)
        if curve.std is not None:
            spread.setdefault(size, []).append(curve.std[index])
    policy = page_policy(reading.page_bytes)
    experiment = "latency_sweep" if curve.kind == "bytes" else "tlb"
    points = []
    for size in sorted(by_size):
        if curve.kind == "bytes":
            params = {"working_set_bytes": size, "page_policy": policy, "access_pattern": reading.pattern,
                      "relative_to_l1": relative}
        else:
            params = {"pages": size, "page_size": policy, "page_bytes": reading.page_bytes, "chain": "published"}
        context = {"published": True}
        if size in spread:
            context["std_ns"] = statistics.fmean(spread[size])
        points.append({"schema_version": 1, "experiment": experiment, "kernel": "published", "metric": "latency",
                       "unit": "ns", "params": params, "samples": by_size[size], "summary": _summary(by_size[size]),
                       "context": context})
    return experiment, points


def _caches(sizes: tuple[int, ...]) -> list[dict]:
    return [{"level": level, "type": "Data" if level == 1 else "Unified", "size_bytes": size}
            for level, size in enumerate(sizes, start=1)]


def _bundle_files(reference: Reference, csv_name: str, content: bytes, curve: Curve, run_id: str,
                  started: datetime) -> dict[str, bytes]:
    relative = reference.reading.relative or curve.relative
    experiment, points = _points(curve, reference.reading, relative)
    stamp = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    raw_path = f"raw/curve/{csv_name}"
    what = "cache curve (bytes,ns)" if curve.kind == "bytes" else "TLB curve (pages,ns)"
    stated = {"source": reference.source, "pattern": reference.reading.pattern,
              "page_bytes": reference.reading.page_bytes, "relative": relative}
    if reference.name:
        stated["name"] = reference.name
    if reference.notes:
        stated["notes"] = reference.notes
    if reference.tool:
        stated["tool"] = reference.tool
    if reference.clock_ghz is not None:
        stated["clock_ghz"] = reference.clock_ghz
    cpu = {**dict(reference.cpu_identity), "model_name": reference.cpu_model}
    facts: dict = {"hostname": reference.host, "cpu": cpu}
    if reference.caches:
        facts["caches"] = _caches(reference.caches)
    manifest = {
        "bundle_schema": 1, "origin": "reference", "run_id": run_id, "host": reference.host, "profile": "external",
        "started_at": stamp, "finished_at": stamp, "status": "complete", "error": None,
        "fleetscope": {"version": __version__, "git_sha": "reference"},
        "facts": facts, "knobs": [], "reference": stated,
        "experiments": [{"name": experiment, "status": "ok", "file": f"results/{experiment}.jsonl", "error": None,
                         "wall_s": None, "notes": [f"a published {what}, not measured by fleetscope: {reference.source}"]
                         + ([curve.note] if curve.note else []),
                         "raw": [{"path": raw_path, "tool": "curve", "params": {"imported_from": csv_name}}]}],
    }
    return {"manifest.json": (json.dumps(manifest, indent=2) + "\n").encode("utf-8"),
            f"results/{experiment}.jsonl": "".join(json.dumps(point) + "\n" for point in points).encode("utf-8"),
            raw_path: content}


def import_curve(results_dir: Path, csv_path: Path, reference: Reference, *,
                 started_at: str | None = None) -> ImportedBundle:
    """Write the bundle of a reference host's curve under results/; `added` is 0 when that bundle was already
    there with the same content. Raises UserError (a CurveCsvError: FILE:LINE) before anything is written."""
    check_host(reference.host)
    if reference.reading.pattern not in PATTERNS:
        raise UserError(f"--pattern {reference.reading.pattern!r}: one of {', '.join(PATTERNS)}")
    if not reference.cpu_model.strip():
        raise UserError("--cpu-model: say which CPU the curve was measured on")
    if len(reference.source) > MAX_SOURCE_CHARS:
        raise UserError(f"--source: at most {MAX_SOURCE_CHARS} characters")
    if reference.tool is not None and not 0 < len(reference.tool) <= MAX_TOOL_CHARS:
        raise UserError(f"--measured-by: say which tool measured the curve, in at most {MAX_TOOL_CHARS} characters")
    if reference.clock_ghz is not None and not MIN_CLOCK_GHZ <= reference.clock_ghz <= MAX_CLOCK_GHZ:
        raise UserError(f"--clock-ghz {reference.clock_ghz:g}: a core clock between {MIN_CLOCK_GHZ:g} and "
                        f"{MAX_CLOCK_GHZ:g} GHz")
    if list(reference.caches) != sorted(reference.caches):
        raise UserError("--caches: give the cache sizes smallest level first, e.g. 32k,1m,32m")
    csv_path = Path(csv_path)
    try:
        content = csv_path.read_bytes()
    except OSError as error:
        raise UserError(f"{csv_path}: cannot read it ({error.strerror or error})") from None
    curve = parse_curve(decode(content), str(csv_path), reference.reading.relative)
    started = _started_at([csv_path], started_at)
    run_id = _run_id(reference.host, "curve", [content], started)
    files = _bundle_files(reference, csv_path.name, content, curve, run_id, started)
    bundle = Path(results_dir) / run_id / reference.host
    if all((bundle / relative).is_file() and (bundle / relative).read_bytes() == data
           for relative, data in files.items()):
        return ImportedBundle(bundle, run_id, 0)
    manifest = bundle / "manifest.json"
    if manifest.is_file() and json.loads(manifest.read_text(encoding="utf-8")).get("origin") != "reference":
        raise UserError(f"{bundle} holds a run that is not a reference curve: name the reference host otherwise")

    def write(staging: Path) -> int:
        for relative, data in files.items():
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            (staging / relative).write_bytes(data)
        return len(files)

    replace_bundle(Path(results_dir), run_id, reference.host, write, keep=False)
    return ImportedBundle(bundle, run_id, 1)


def refuse_lab_host(connection: duckdb.DuckDBPyConnection, host: str) -> None:
    """A reference host must not share its name with a lab machine: their runs would read as one host's."""
    origins = {origin for (origin,) in connection.execute(sql("reference/host_origins"), [host]).fetchall()}
    if origins - {"reference"}:
        raise UserError(f"--host {host!r} is a lab host in the warehouse (runs of origin "
                        f"{', '.join(sorted(origins - {'reference'}))}): name the reference host otherwise, "
                        "e.g. ref-" + host)


# ---- the shipped library -------------------------------------------------------------------------------

def library(directory: Path = LIBRARY_DIR) -> list[LibraryEntry]:
    """The shipped reference curves, as library.json lists them."""
    document = json.loads((directory / "library.json").read_text(encoding="utf-8"))
    if document.get("library_schema") != SUPPORTED_LIBRARY_SCHEMA:
        raise UserError(f"{directory / 'library.json'}: library_schema {document.get('library_schema')!r}, "
                        f"this fleetscope reads {SUPPORTED_LIBRARY_SCHEMA}")
    entries = []
    for item in document["references"]:
        file = directory / item["file"]
        header = next(line for line in file.read_text(encoding="utf-8").splitlines() if line.strip())
        reading = CurveReading(item["pattern"], item["page_bytes"], item["relative"])
        identity = tuple((key, tuple(value) if isinstance(value, list) else value)
                         for key, value in item.get("cpu_identity", {}).items())
        reference = Reference(item["host"], item["cpu_model"], item["source"], reading, tuple(item["caches"]),
                              identity, item["host"], item.get("notes"), item.get("tool"), item.get("clock_ghz"))
        entries.append(LibraryEntry(reference, file, "pages" if "pages" in header.lower().split(",") else "bytes"))
    return entries


def recorded_at(directory: Path = LIBRARY_DIR) -> str:
    """When the library's curves entered it: the date of each reference host's run."""
    return json.loads((directory / "library.json").read_text(encoding="utf-8"))["recorded_at"]


def chosen(names: list[str], entries: list[LibraryEntry]) -> list[LibraryEntry]:
    """The entries named (all of them when none is); UserError naming the unknown ones and what exists."""
    if not names:
        return entries
    known = {entry.reference.host: entry for entry in entries}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UserError(f"no reference {', '.join(map(repr, unknown))} in the library; it has: "
                        f"{', '.join(sorted(known))} (fleetscope reference list)")
    return [known[name] for name in dict.fromkeys(names)]


def library_rows(entries: list[LibraryEntry]) -> list[dict]:
    """`reference list` rows (its --format json is these)."""
    return [{"host": entry.reference.host, "cpu_model": entry.reference.cpu_model, "kind": entry.kind,
             "pattern": entry.reference.reading.pattern, "page_bytes": entry.reference.reading.page_bytes,
             "relative": entry.reference.reading.relative, "caches_bytes": list(entry.reference.caches),
             "tool": entry.reference.tool, "clock_ghz": entry.reference.clock_ghz,
             "file": entry.file.name, "source": entry.reference.source, "notes": entry.reference.notes}
            for entry in entries]
