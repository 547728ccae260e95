"""Load and validate one result bundle (results/<run_id>/<host>/) before anything reaches the warehouse.

A bundle comes from a measured host and is untrusted: every byte is checked against the contract in
fleetscope/schemas/ and the first problem found refuses the whole bundle with a BundleError that names
the file, the line (for JSON lines) and the JSON path of the field, and says what to fix.
"""

from __future__ import annotations

import hashlib
import json
import math
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import jsonschema

from fleetscope.parsers import ParseError, decode, parser

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
SUPPORTED_BUNDLE_SCHEMA = 1
SUPPORTED_POINT_SCHEMA = 1

# Each step turns a manifest of bundle_schema N into one of N + 1. There is only version 1 so far;
# when version 2 ships, add `1: _manifest_1_to_2` here and commit a version-1 fixture bundle.
MANIFEST_UPGRADES: dict[int, Callable[[dict], dict]] = {}


class BundleError(Exception):
    """A bundle that breaks the contract; the message says where and what to fix."""


@dataclass(frozen=True)
class Point:
    """One validated JSON line of an experiment's results file."""

    experiment: str
    point_index: int  # 0-based position of the line in its file
    document: dict


@dataclass(frozen=True)
class RawOutput:
    """One verbatim tool output named in an experiment's `raw` list, parsed by its tool's parser."""

    experiment: str
    path: str  # relative to the bundle
    tool: str
    params: dict  # what the role recorded about the run
    sha256: str
    size_bytes: int
    parsed: dict | None  # None when the file could not be read (see note)
    rows: tuple[dict, ...]  # the parser's long-format rows, params overlaid on the role's
    truncated: bool
    note: str | None


@dataclass(frozen=True)
class Bundle:
    """A validated bundle: the manifest (upgraded to the current schema) and its measured points."""

    path: Path  # absolute
    manifest: dict
    delivered_bundle_schema: int
    points: tuple[Point, ...]
    content_sha256: str
    raw_outputs: tuple[RawOutput, ...] = ()

    @property
    def run_id(self) -> str:
        return self.manifest["run_id"]

    @property
    def host(self) -> str:
        return self.manifest["host"]


def _schema_validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    # jsonschema only checks "date-time" when rfc3339-validator is installed; check it ourselves.
    format_checker = jsonschema.FormatChecker(formats=())
    format_checker.checks("date-time", raises=ValueError)(_is_rfc3339_datetime)
    return validator_class(schema, format_checker=format_checker)


def _is_rfc3339_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True  # the "type" keyword reports non-strings
    parsed = datetime.fromisoformat(value)
    return "T" in value.upper() and parsed.tzinfo is not None


_MANIFEST_VALIDATOR = _schema_validator("manifest.schema.json")
_POINT_VALIDATOR = _schema_validator("point.schema.json")


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse_finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} does not fit in a double")
    return value


def _parse_json(text: str) -> object:
    # Python's json accepts NaN/Infinity and turns 1e999 into inf; a measurement must be finite.
    return json.loads(text, parse_constant=_reject_constant, parse_float=_parse_finite_float)


def _schema_problem(validator: jsonschema.protocols.Validator, document: dict) -> str | None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is None:
        return None
    return f"at {error.json_path}: {error.message}"


def _check_version(document: dict, key: str, supported: int, where: str) -> int:
    version = document.get(key)
    if isinstance(version, bool) or not isinstance(version, int):
        raise BundleError(
            f"{where}: at $.{key}: expected an integer format version, found {json.dumps(version)}: "
            "the file was not written by fleetscope or is damaged; re-collect the bundle"
        )
    if version > supported:
        kind = "bundle schema" if key == "bundle_schema" else "point schema"
        raise BundleError(
            f"{where}: {kind} {version} is newer than this fleetscope supports ({supported}): "
            "upgrade fleetscope"
        )
    return version


def _upgrade_manifest(manifest: dict, where: str) -> dict:
    version = manifest["bundle_schema"]
    while version < SUPPORTED_BUNDLE_SCHEMA:
        step = MANIFEST_UPGRADES.get(version)
        if step is None:
            raise BundleError(
                f"{where}: at $.bundle_schema: bundle schema {version} is not a version fleetscope "
                f"ever wrote and cannot be upgraded to {SUPPORTED_BUNDLE_SCHEMA}; re-collect the bundle"
            )
        manifest = step(manifest)
        version = manifest["bundle_schema"]
    return manifest


def _read_regular_file(bundle_root: Path, relative: str, where: str) -> bytes:
    """Read a file named by the bundle, refusing anything that resolves outside the bundle."""
    if Path(relative).is_absolute():
        raise BundleError(f"{where}: {relative!r} is an absolute path: files must be named relative to the bundle")
    resolved = (bundle_root / relative).resolve()
    if not resolved.is_relative_to(bundle_root):
        raise BundleError(
            f"{where}: {relative!r} resolves to {resolved}, outside the bundle {bundle_root}: "
            "a bundle may only name its own files (no '..', no symlinks out)"
        )
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:
        raise BundleError(f"{where}: {relative!r} does not exist in the bundle: re-collect the bundle") from None
    if not stat.S_ISREG(mode):
        raise BundleError(f"{where}: {relative!r} is not a regular file")
    return resolved.read_bytes()


def _parse_points(data: bytes, experiment: str, display: str) -> list[Point]:
    lines = data.split(b"\n")
    ends_with_newline = lines[-1] == b""
    if ends_with_newline:
        lines.pop()
    points = []
    for number, raw_line in enumerate(lines, start=1):
        where = f"{display}: line {number}"
        is_last = number == len(lines)
        try:
            document = _parse_json(raw_line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            if is_last and not ends_with_newline:
                raise BundleError(
                    f"{where}: the last line is truncated (no newline and not complete JSON: {error}): "
                    "the experiment was interrupted while writing; re-run it or re-collect the bundle"
                ) from None
            raise BundleError(f"{where}: not valid JSON ({error}): each line must be one JSON object") from None
        if not isinstance(document, dict):
            raise BundleError(f"{where}: at $: expected a JSON object, found {type(document).__name__}")
        _check_version(document, "schema_version", SUPPORTED_POINT_SCHEMA, where)
        problem = _schema_problem(_POINT_VALIDATOR, document)
        if problem:
            raise BundleError(f"{where}: {problem}: the line must match fleetscope/schemas/point.schema.json")
        if document["experiment"] != experiment:
            raise BundleError(
                f"{where}: at $.experiment: {document['experiment']!r} does not match the manifest's "
                f"experiment {experiment!r} for this file: each experiment writes its own file"
            )
        points.append(Point(experiment=experiment, point_index=number - 1, document=document))
    return points


def _check_manifest_consistency(manifest: dict, bundle_root: Path, where: str) -> None:
    for key, directory_name in (("host", bundle_root.name), ("run_id", bundle_root.parent.name)):
        if manifest[key] != directory_name:
            raise BundleError(
                f"{where}: at $.{key}: {manifest[key]!r} does not match the bundle directory name "
                f"{directory_name!r}: bundles must live at results/<run_id>/<host>/"
            )
    for key, field in (("experiments", "name"), ("knobs", "name")):
        seen: set[str] = set()
        for index, entry in enumerate(manifest[key]):
            if entry[field] in seen:
                raise BundleError(f"{where}: at $.{key}[{index}].{field}: {entry[field]!r} appears twice")
            seen.add(entry[field])
    files_seen: set[str] = set()
    for index, experiment in enumerate(manifest["experiments"]):
        file = experiment.get("file")
        if file is None and experiment["status"] == "ok" and not experiment.get("raw"):
            raise BundleError(
                f"{where}: at $.experiments[{index}].file: experiment {experiment['name']!r} is 'ok' "
                "but names no results file and no raw output"
            )
        for raw_index, raw in enumerate(experiment.get("raw") or []):
            normalized = str(Path(raw["path"]))
            if normalized in files_seen:
                raise BundleError(
                    f"{where}: at $.experiments[{index}].raw[{raw_index}].path: {raw['path']!r} is named twice"
                )
            files_seen.add(normalized)
        if file is not None:
            normalized = str(Path(file))
            if normalized in files_seen:
                raise BundleError(f"{where}: at $.experiments[{index}].file: {file!r} is named by two experiments")
            files_seen.add(normalized)


def _output_problems(parsed: dict) -> tuple[bool, str | None]:
    """Whether a parsed output was cut short, and what the tool itself complained about."""
    runs = parsed.get("runs") or []
    truncated = any(run.get("truncated") for run in runs)
    problems = [run["truncation"] for run in runs if run.get("truncated") and run.get("truncation")]
    problems += [f"line {error['line']}: {error['message']}" for error in parsed.get("tool_errors") or []]
    return truncated, "; ".join(problems) or None


def _parse_raw(data: bytes, experiment: dict, raw: dict, display: str, where: str) -> RawOutput:
    """Parse one raw output. An unreadable output of an 'ok' experiment refuses the bundle; one of
    a failed experiment (a tool killed half way) is kept unparsed with the reason, so the rest of
    what the host measured still loads."""
    tool = raw["tool"]
    module = parser(tool)
    try:
        parsed = module.parse(decode(data), source=display)
        rows = tuple({**row, "params": {**(raw.get("params") or {}), **row["params"]}} for row in module.rows(parsed))
    except ParseError as error:
        if experiment["status"] == "ok":
            raise BundleError(
                f"{where}: {error}: the {tool} output of an experiment marked 'ok' cannot be read; "
                "re-collect the bundle, or re-run the experiment"
            ) from None
        return RawOutput(experiment["name"], raw["path"], tool, raw.get("params") or {},
                         hashlib.sha256(data).hexdigest(), len(data), None, (), False,
                         f"not loaded: {error}")
    truncated, note = _output_problems(parsed)
    return RawOutput(experiment["name"], raw["path"], tool, raw.get("params") or {},
                     hashlib.sha256(data).hexdigest(), len(data), parsed, rows, truncated, note)


def load_bundle(path: Path) -> Bundle:
    """Validate the bundle at `path` and return it; raise BundleError on the first problem found."""
    bundle_root = Path(path).resolve()
    if not bundle_root.is_dir():
        raise BundleError(f"{path}: not a directory: a bundle is a directory results/<run_id>/<host>/")
    manifest_display = str(bundle_root / "manifest.json")
    manifest_bytes = _read_regular_file(bundle_root, "manifest.json", manifest_display)
    try:
        manifest = _parse_json(manifest_bytes.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise BundleError(f"{manifest_display}: not valid JSON ({error}): re-collect the bundle") from None
    if not isinstance(manifest, dict):
        raise BundleError(f"{manifest_display}: at $: expected a JSON object, found {type(manifest).__name__}")
    delivered_schema = _check_version(manifest, "bundle_schema", SUPPORTED_BUNDLE_SCHEMA, manifest_display)
    manifest = _upgrade_manifest(manifest, manifest_display)
    problem = _schema_problem(_MANIFEST_VALIDATOR, manifest)
    if problem:
        raise BundleError(
            f"{manifest_display}: {problem}: the manifest must match fleetscope/schemas/manifest.schema.json"
        )
    _check_manifest_consistency(manifest, bundle_root, manifest_display)

    content = hashlib.sha256()
    content.update(b"manifest.json\0" + manifest_bytes + b"\0")
    points: list[Point] = []
    raw_outputs: list[RawOutput] = []
    for index, experiment in enumerate(manifest["experiments"]):
        file = experiment.get("file")
        if file is not None:
            where = f"{manifest_display}: at $.experiments[{index}].file"
            if experiment["status"] == "ok" or (bundle_root / file).exists():
                # a failed or skipped experiment may have written nothing
                data = _read_regular_file(bundle_root, file, where)
                content.update(file.encode("utf-8") + b"\0" + data + b"\0")
                points.extend(_parse_points(data, experiment["name"], str(bundle_root / file)))
        for raw_index, raw in enumerate(experiment.get("raw") or []):
            where = f"{manifest_display}: at $.experiments[{index}].raw[{raw_index}].path"
            data = _read_regular_file(bundle_root, raw["path"], where)
            content.update(raw["path"].encode("utf-8") + b"\0" + data + b"\0")
            raw_outputs.append(_parse_raw(data, experiment, raw, str(bundle_root / raw["path"]), where))
    return Bundle(
        path=bundle_root,
        manifest=manifest,
        delivered_bundle_schema=delivered_schema,
        points=tuple(points),
        content_sha256=content.hexdigest(),
        raw_outputs=tuple(raw_outputs),
    )


def utc_timestamp(value: str) -> str:
    """An RFC 3339 timestamp from a manifest as a naive UTC ISO string (the warehouse stores UTC)."""
    return datetime.fromisoformat(value).astimezone(UTC).replace(tzinfo=None).isoformat()
