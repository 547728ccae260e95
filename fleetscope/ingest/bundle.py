"""Load and validate one result bundle (results/<run_id>/<host>/) before anything reaches the warehouse.

A bundle comes from a measured host and is untrusted: every byte is checked against the contract in
fleetscope/schemas/ and the first problem found refuses the whole bundle with a BundleError that names
the file, the line (for JSON lines) and the JSON path of the field, and says what to fix. The caps
below bound what one bundle can cost the controller (SECURITY.md); each is checked before the work it
bounds, so memory stays proportional to the bundle and nothing recurses without a limit.

`open_bundle` reads the manifest and hashes the files it names; `Bundle.points()` and
`Bundle.raw_outputs()` then stream the files, validating as they go, so a bundle is never held in
memory whole. `load_bundle` does both and so validates everything.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import jsonschema

from fleetscope.ingest.parsers import ParseError, decode, parser
from fleetscope.ingest.parsers.json_limits import parse_json
from fleetscope.ingest.schema_check import Unsupported, compile_schema, rfc3339_datetime
from fleetscope.resources import SCHEMAS_DIR

SCHEMA_DIR = SCHEMAS_DIR
SUPPORTED_BUNDLE_SCHEMA = 1
SUPPORTED_POINT_SCHEMA = 1

# What one bundle may ask of the controller (SECURITY.md lists them with their refusals).
MAX_BUNDLE_BYTES = 256 * 2**20      # the manifest and every file it names, together
MAX_LINE_BYTES = 32 * 2**20         # one results line; also the manifest and each raw output (each is parsed whole)
MAX_SAMPLES_PER_POINT = 4 * 2**20   # samples of one point (one line)
# MAX_JSON_DEPTH and MAX_JSON_KEYS (fleetscope.ingest.parsers.json_limits) bound every JSON document before it is parsed
MAX_TEXT_CHARS = 65536              # characters of one text (a string or an object's key) in a manifest or point
# Items of the arrays of one manifest, all together, counted before its schema is checked: jsonschema takes
# 3 to 6 us of CPU an item it checks (a manifest of 1 MiB of NUMA distances or notes took 2.7 to 4.1 s, and
# the line cap allows 32 MiB); a real manifest holds a few hundred (a 256-node SLIT matrix is 65536).
MAX_MANIFEST_ITEMS = 65536
# What a parser read from a raw output, as JSON, with the role's params in each row: at most this many times
# the output's bytes, plus the slack (real outputs take 3 to 13 times); a parser whose output grows faster
# than its input (a run per line copying what the lines before it set) is stopped at the limit.
MAX_PARSED_FACTOR = 64
MAX_PARSED_SLACK = 2**20
# Integers must fit 64 bits (signed or unsigned): the warehouse stores them as BIGINT or DOUBLE.
_INTEGER_RANGE = (-(2**63), 2**64 - 1)

# Each step turns a manifest of bundle_schema N into one of N + 1. There is only version 1 so far;
# when version 2 ships, add `1: _manifest_1_to_2` here and commit a version-1 fixture bundle.
MANIFEST_UPGRADES: dict[int, Callable[[dict], dict]] = {}
_READ_CHUNK = 2**20
# folder_signature: at most this many entries in a folder it signs, and how long ago its last change must be
MAX_SIGNED_ENTRIES = 100_000
SIGNATURE_SETTLE_NS = 1_000_000_000


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
class BundleFile:
    """A file the manifest names, as it was when the bundle was opened."""

    experiment_index: int
    relative: str
    raw_index: int | None  # position in the experiment's `raw` list; None for its results file
    path: Path  # resolved, inside the bundle
    sha256: str


@dataclass(frozen=True)
class Bundle:
    """A bundle whose manifest is valid (upgraded to the current schema) and whose files were hashed.
    `points()` and `raw_outputs()` validate the files while streaming them."""

    path: Path  # absolute
    manifest: dict
    delivered_bundle_schema: int
    content_sha256: str
    files: tuple[BundleFile, ...]

    @property
    def run_id(self) -> str:
        return self.manifest["run_id"]

    @property
    def host(self) -> str:
        return self.manifest["host"]

    def points(self) -> Iterator[Point]:
        """Every measured point of every results file, in manifest order; raises BundleError."""
        for file in self.files:
            if file.raw_index is None:
                experiment = self.manifest["experiments"][file.experiment_index]["name"]
                yield from _stream_points(self.path, file, experiment)

    def raw_outputs(self) -> Iterator[RawOutput]:
        """Every raw tool output, parsed, in manifest order; raises BundleError."""
        for file in self.files:
            if file.raw_index is not None:
                experiment = self.manifest["experiments"][file.experiment_index]
                data = _read_whole(self.path, file)
                where = (f"{self.path / 'manifest.json'}: at $.experiments[{file.experiment_index}]"
                         f".raw[{file.raw_index}].path")
                yield _parse_raw(data, experiment, experiment["raw"][file.raw_index], str(self.path / file.relative),
                                 where)


def _schema_validator(name: str, schema: dict | None = None) -> jsonschema.protocols.Validator:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8")) if schema is None else schema
    validator_class = jsonschema.validators.validator_for(schema)
    # The schemas ship with the package: tests/unit/test_schema_check.py checks them against their meta-schema,
    # which cost every ingest process 0.4 s of CPU when checked here.
    # A name must match its pattern whole: JSON Schema's `pattern` searches, and Python's `$` also
    # matches before a final newline, which let "<run_id>\n" through.
    # An integer is written as one: JSON Schema counts 4096.0 as an integer, but the views read the
    # text "4096.0", which no integer cast takes.
    strict_integers = validator_class.TYPE_CHECKER.redefine(
        "integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool))
    full_match = jsonschema.validators.extend(validator_class, {"pattern": _full_match_pattern},
                                              type_checker=strict_integers)
    # jsonschema only checks "date-time" when rfc3339-validator is installed; check it ourselves.
    format_checker = jsonschema.FormatChecker(formats=())
    format_checker.checks("date-time")(rfc3339_datetime)
    return full_match(schema, format_checker=format_checker)


def _full_match_pattern(validator, pattern: str, instance: object, schema: dict):
    if validator.is_type(instance, "string") and re.fullmatch(pattern, instance) is None:
        explain = _PATTERN_MEANINGS.get(pattern)
        yield jsonschema.ValidationError(explain(instance) if explain else
                                         f"{instance[:200]!r} does not match {pattern!r} (the whole text must match)")


def _path_meaning(path: str) -> str:
    shown = repr(path[:200])
    if path.startswith("/"):
        return f"{shown} is an absolute path: files must be named relative to the bundle"
    if ".." in path.split("/"):
        return f"{shown} climbs out with '..': a file outside the bundle is never read"
    return (f"{shown} is not a path inside the bundle in normal form (names joined by '/', no '.' or '..', no "
            "control characters)")


# What a pattern of the schema asks for, in words, where the pattern itself does not read as it.
_PATTERN_MEANINGS = {
    (r"^(?!\.\.?(?:/|$))[^\u0000-\u001f\u007f-\u009f/]+(?:/(?!\.\.?(?:/|$))[^\u0000-\u001f\u007f-\u009f/]+)*$"):
        _path_meaning,
}


_MANIFEST_VALIDATOR = _schema_validator("manifest.schema.json")
_POINT_VALIDATOR = _schema_validator("point.schema.json")


class _SchemaCheck:
    """A schema's verdict on many documents: the schema compiled once into plain checks (schema_check) decides
    that a document is valid; one it finds invalid goes to jsonschema, whose message names the field and whose
    verdict stands. jsonschema builds objects for every keyword of every subschema it checks: it took ~0.4 ms
    a point, most of the time to validate a bundle; the compiled checks take a few us. A schema the compiler
    does not take (a keyword it lacks) is judged by jsonschema alone."""

    def __init__(self, validator: jsonschema.protocols.Validator):
        self.validator = validator
        try:
            self.compiled: Callable[[object], bool] | None = compile_schema(validator.schema)
        except Unsupported:
            self.compiled = None

    def problem(self, document: object) -> str | None:
        if self.compiled is not None and self.compiled(document):
            return None
        return _schema_problem(self.validator, document)


_POINT_SCHEMA = _SchemaCheck(_POINT_VALIDATOR)
_MANIFEST_SCHEMA = _SchemaCheck(_MANIFEST_VALIDATOR)


def name_pattern(field: str) -> str:
    """The pattern the manifest schema gives `field` (run_id, host), for checks outside a bundle."""
    return _MANIFEST_VALIDATOR.schema["properties"][field]["pattern"]


# ---- values, checked once a document is parsed ------------------------------------------------

def _number_problem(value: object) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{'NaN' if math.isnan(value) else 'Infinity' if value > 0 else '-Infinity'} is not a finite number"
    if isinstance(value, int) and not isinstance(value, bool) and not _INTEGER_RANGE[0] <= value <= _INTEGER_RANGE[1]:
        return f"the integer {value:.3e} does not fit in 64 bits"
    return None


def _text_problem(value: str) -> str | None:
    if len(value) > MAX_TEXT_CHARS:
        return (f"{json.dumps(value[:40])[:60]}... is {len(value)} characters long, more than MAX_TEXT_CHARS "
                f"({MAX_TEXT_CHARS}) one text may hold")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return f"{json.dumps(value)[:60]} holds a lone surrogate, which is not text"
    return None


def _value_problem(value: object, path: str = "$") -> str | None:
    """The first number that is not finite or does not fit 64 bits, or string that is not text, as
    'at <JSON path>: <what>'; the recursion is as deep as the document, at most MAX_JSON_DEPTH."""
    if _values_fine(value):
        return None
    found = _first_value_problem(value)
    return None if found is None else f"at {path}{found[0]}: {found[1]}"


def _values_fine(value: object) -> bool:
    """True when `value` holds no problem _first_value_problem would find, told in one pass without recursion
    or a call per value: every text (keys too) gathered and measured at once (the longest; one encoding of all
    of them, which fails on any lone surrogate), every float summed (a NaN or an infinity makes the sum NaN or
    infinite) and every integer's min and max compared with the 64-bit bounds. False where that cannot tell
    (also for a sum of finite floats that overflows): _first_value_problem then looks value by value, and
    says where. What _first_value_problem passes over (booleans, None, any other type) is passed over here."""
    texts: list[str] = []
    floats: list[float] = []
    integers: list[int] = []
    pending = [value]
    sinks = {float: floats.append, str: texts.append, int: integers.append}  # JSON's scalars, by their exact type
    while pending:
        item = pending.pop()
        kind = type(item)  # by identity first (a parser's rows are many small dicts), subclasses after
        if kind is dict:
            texts.extend(item)
            for member in item.values():  # a scalar member costs no trip through `pending`
                kind = type(member)
                sink = sinks.get(kind)
                if sink is not None:
                    sink(member)
                elif kind is not bool and member is not None:
                    pending.append(member)
        elif kind is list:
            types = set(map(type, item))
            if types == {float}:
                floats.extend(item)
            elif types == {int}:
                integers.extend(item)
            elif types == {str}:
                texts.extend(item)
            else:
                pending.extend(item)
        elif kind in sinks:
            sinks[kind](item)
        elif isinstance(item, dict):
            texts.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str):
            texts.append(item)
        elif isinstance(item, bool):
            continue
        elif isinstance(item, float):
            floats.append(item)
        elif isinstance(item, int):
            integers.append(item)
    if texts:
        try:
            if max(map(len, texts)) > MAX_TEXT_CHARS:
                return False
            "".join(texts).encode("utf-8")
        except (UnicodeEncodeError, TypeError):  # a lone surrogate; a key that is not text
            return False
    if floats and not math.isfinite(sum(floats)):
        return False
    return not integers or (_INTEGER_RANGE[0] <= min(integers) and max(integers) <= _INTEGER_RANGE[1])


def _first_value_problem(value: object) -> tuple[str, str] | None:
    """(where below `value`, what) of its first problem (_value_problem). The path is built only on the way
    back from a problem, and a list of floats whose sum is finite has none (a NaN or an infinity makes any sum
    NaN or infinite), nor a list of integers between the 64-bit bounds: a point's samples cost a sum or a
    min and max, not a call each."""
    if isinstance(value, dict):
        for key, item in value.items():
            if problem := _text_problem(key):
                return "", f"the key {problem}"
            if found := _first_value_problem(item):
                return f".{key}{found[0]}", found[1]
        return None
    if isinstance(value, list):
        types = set(map(type, value))
        if types == {float} and math.isfinite(sum(value)) or \
                types == {int} and _INTEGER_RANGE[0] <= min(value) and max(value) <= _INTEGER_RANGE[1]:
            return None
        for index, item in enumerate(value):
            if found := _first_value_problem(item):
                return f"[{index}]{found[0]}", found[1]
        return None
    problem = _number_problem(value) or (_text_problem(value) if isinstance(value, str) else None)
    return ("", problem) if problem else None


def _items_problem(document: dict) -> str | None:
    """More array items in the manifest than MAX_MANIFEST_ITEMS, counted in one pass (no recursion)."""
    count, pending = 0, [document]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            count += len(value)
            if count > MAX_MANIFEST_ITEMS:
                return (f"at $: more than MAX_MANIFEST_ITEMS ({MAX_MANIFEST_ITEMS}) array items one manifest may "
                        f"hold (an array of {len(value)} passed the limit)")
            pending.extend(value)
    return None


# What a measurement can be. A time, a rate or a cycle count is positive and, from a kernel, far below
# MAX_MEASURED (1e15 ns is 11.6 days, 1e15 GB/s no machine); a count is a count (64 bits); a ratio is not
# negative; a published curve read as ns over L1 (params.relative_to_l1) may sit at or below zero.
MAX_MEASURED = 1e15


def _measured_range(document: dict) -> tuple[float, bool, float]:
    """(lowest, whether the lowest itself is allowed, highest) of a point's samples and summary."""
    unit = document.get("unit")
    params = document.get("params")
    if isinstance(params, dict) and params.get("relative_to_l1") is True:
        return -MAX_MEASURED, True, MAX_MEASURED
    if unit == "count":
        return 0, True, _INTEGER_RANGE[1]
    if unit == "ratio":
        return 0, True, MAX_MEASURED
    return 0, False, MAX_MEASURED


def _range_text(value: int | float, path: str, unit: object, lowest: float, inclusive: bool, highest: float) -> str:
    if value > highest:
        return (f"at {path}: {value:.4g} is more than MAX_MEASURED ({highest:g}) a measurement in {unit!r} "
                "may be: no measured value is that large")
    return (f"at {path}: {value:.4g} is not {'at least' if inclusive else 'above'} {lowest:g}: "
            f"a measurement in {unit!r} is {'never negative' if inclusive else 'positive'}")


def _samples_problem(samples: list, document: dict) -> str | None:
    """The point schema's rule for samples (numbers), checked here in one fast pass instead of by
    jsonschema (a point may hold millions), plus finiteness, the range of a measurement and the cap."""
    if len(samples) > MAX_SAMPLES_PER_POINT:
        return (f"at $.samples: {len(samples)} samples, more than MAX_SAMPLES_PER_POINT "
                f"({MAX_SAMPLES_PER_POINT}) a point may hold")
    low, high = _INTEGER_RANGE
    lowest, inclusive, highest = _measured_range(document)
    for index, value in enumerate(samples):
        if isinstance(value, float):
            if value - value == 0.0:  # NaN and infinities give NaN
                if lowest < value <= highest or (inclusive and value == lowest):
                    continue
                return _range_text(value, f"$.samples[{index}]", document.get("unit"), lowest, inclusive, highest)
        elif isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            if lowest < value <= highest or (inclusive and value == lowest):
                continue
            return _range_text(value, f"$.samples[{index}]", document.get("unit"), lowest, inclusive, highest)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"at $.samples[{index}]: {json.dumps(value)[:60]} is not of type 'number'"
        return f"at $.samples[{index}]: {_number_problem(value)}"
    return None


def _summary_problem(document: dict) -> str | None:
    """The summary's statistics within the range of a measurement (the schema made them numbers)."""
    lowest, inclusive, highest = _measured_range(document)
    for key in ("min", "median", "mean", "ci95_low", "ci95_high"):
        value = document["summary"][key]
        if not (lowest < value <= highest or (inclusive and value == lowest)):
            return _range_text(value, f"$.summary.{key}", document.get("unit"), lowest, inclusive, highest)
    return None


COUNTER_STATES = frozenset({"counted", "not supported", "not permitted", "not counted", "failed"})
_COUNTER_EVENT = re.compile(r"[a-z][a-z0-9-]{0,63}")
MAX_COUNTER_EVENTS = 32
MAX_IPC = 1000.0


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"{path}[{key!r}]"


def _count_problem(value: object, nullable: bool) -> str | None:
    low, high = 0, _INTEGER_RANGE[1]
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{json.dumps(value)[:60]} is not of type 'integer'"
    return None if low <= value <= high else f"{value} is outside {low}..{high}"


def _fraction_problem(value: object, high: float) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= high:
        return f"{json.dumps(value)[:60]} is not a number from 0 to {high:g}"
    return None


def _counters_problem(counters: object) -> str | None:
    """context.counters (kernels/include/counters.h) as the warehouse reads it: known states, a count
    only where an event counted (never an invented 0 beside `not supported`), counts non-negative
    integers. One pass in Python: jsonschema took ten times as long per point for the same rules."""
    path = "$.context.counters"
    if not isinstance(counters, dict):
        return f"at {path}: {json.dumps(counters)[:60]} is not of type 'object'"
    if counters.get("scope") != "timed region":
        return f"at {path}.scope: 'timed region' was expected"
    events = counters.get("events")
    if not isinstance(events, dict) or len(events) > MAX_COUNTER_EVENTS:
        return f"at {path}.events: an object of at most {MAX_COUNTER_EVENTS} events was expected"
    for name, event in events.items():
        where = _key_path(f"{path}.events", name)
        if not _COUNTER_EVENT.fullmatch(name):
            return f"at {path}.events: {name[:60]!r} is not an event name (a-z, 0-9, -)"
        if not isinstance(event, dict):
            return f"at {where}: {json.dumps(event)[:60]} is not of type 'object'"
        state = event.get("state")
        if not isinstance(state, str) or state not in COUNTER_STATES:
            return f"at {where}.state: {json.dumps(state)[:60]} is not one of {sorted(COUNTER_STATES)}"
        if "value" not in event:
            return f"at {where}: 'value' is a required property"
        value = event["value"]
        value_problem = (_count_problem(value, nullable=False) if state == "counted" else None if value is None
                         else f"{json.dumps(value)[:60]} beside state {state!r}: only a counted event has a value")
        for key, problem in (("value", value_problem),
                             ("time_enabled_ns", _count_problem(event.get("time_enabled_ns"), nullable=True)),
                             ("time_running_ns", _count_problem(event.get("time_running_ns"), nullable=True)),
                             ("running_fraction", _fraction_problem(event.get("running_fraction"), 1.0))):
            if problem:
                return f"at {where}.{key}: {problem}"
    if problem := _fraction_problem(counters.get("ipc"), MAX_IPC):
        return f"at {path}.ipc: {problem}"
    throttle = counters.get("throttle")
    if throttle is not None:
        if not isinstance(throttle, dict) or not isinstance(throttle.get("throttled"), bool):
            return f"at {path}.throttle: {{core_events, package_events, throttled}} or null was expected"
        for key in ("core_events", "package_events"):
            if problem := _count_problem(throttle.get(key), nullable=False):
                return f"at {path}.throttle.{key}: {problem}"
    return _sensors_problem(counters, path)


_SENSOR_TEXT = re.compile(r"[\x20-\x7e]{1,63}")
_RAPL_ZONE = re.compile(r"intel-rapl(:[0-9]{1,4}){1,3}")
MAX_SENSORS = 32
MAX_REASON = 400
MAX_JOULES = 1e9        # a region of seconds at any power stays far below
MAX_WATTS = 1e5
TEMPERATURE_C = (-100.0, 250.0)


def _range_problem(value: object, low: float, high: float) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        return f"{json.dumps(value)[:60]} is not a number from {low:g} to {high:g}"
    return None


def _reading_problem(reading: object, where: str, items: str) -> str | None:
    """The shape every sensor reading shares: {available, reason, <items>: [...]}, a reason exactly when
    nothing was available (a zero is never a stand-in for a reading that could not be taken)."""
    if not isinstance(reading, dict) or not isinstance(reading.get("available"), bool):
        return f"at {where}: {{available, reason, {items}}} was expected"
    reason = reading.get("reason")
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
        return f"at {where}.reason: a string of at most {MAX_REASON} characters or null was expected"
    if not reading["available"] and not reason:
        return f"at {where}.reason: a reading that is not available must say why"
    listed = reading.get(items)
    if not isinstance(listed, list) or len(listed) > MAX_SENSORS or not all(isinstance(item, dict) for item in listed):
        return f"at {where}.{items}: a list of at most {MAX_SENSORS} objects was expected"
    return None


def _sensors_problem(counters: dict, path: str) -> str | None:
    """context.counters.energy and .temperature (kernels/include/sensors.h), where a kernel recorded them:
    zones named as powercap names them, joules and watts non-negative and only beside a zone read twice,
    temperatures in degrees C."""
    energy, temperature = counters.get("energy"), counters.get("temperature")
    if energy is not None:
        where = f"{path}.energy"
        if problem := _reading_problem(energy, where, "zones") or _range_problem(energy.get("seconds"), 0, 1e6):
            return problem if problem.startswith("at ") else f"at {where}.seconds: {problem}"
        for index, zone in enumerate(energy["zones"]):
            at = f"{where}.zones[{index}]"
            if not isinstance(zone.get("zone"), str) or not _RAPL_ZONE.fullmatch(zone["zone"]):
                return f"at {at}.zone: a powercap zone name (intel-rapl:N[:M]) was expected"
            if not isinstance(zone.get("name"), str) or not _SENSOR_TEXT.fullmatch(zone["name"]):
                return f"at {at}.name: printable text of at most 63 characters was expected"
            if not isinstance(zone.get("wrapped"), bool):
                return f"at {at}.wrapped: a boolean was expected"
            for key, high in (("joules", MAX_JOULES), ("watts", MAX_WATTS)):
                if problem := _range_problem(zone.get(key), 0, high):
                    return f"at {at}.{key}: {problem}"
            for key in ("before_uj", "after_uj", "max_energy_range_uj"):
                if problem := _count_problem(zone.get(key), nullable=True):
                    return f"at {at}.{key}: {problem}"
            if zone.get("joules") is None and not zone.get("reason"):
                return f"at {at}.reason: a zone without joules must say why"
    if temperature is not None:
        where = f"{path}.temperature"
        if problem := _reading_problem(temperature, where, "sensors"):
            return problem
        for index, sensor in enumerate(temperature["sensors"]):
            at = f"{where}.sensors[{index}]"
            for key in ("chip", "label"):
                if not isinstance(sensor.get(key), str) or not _SENSOR_TEXT.fullmatch(sensor[key]):
                    return f"at {at}.{key}: printable text of at most 63 characters was expected"
            for key in ("before_c", "after_c"):
                if problem := _range_problem(sensor.get(key), *TEMPERATURE_C):
                    return f"at {at}.{key}: {problem}"
    return None


def _schema_problem(validator: jsonschema.protocols.Validator, document: dict) -> str | None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is None:
        return None
    return f"at {error.json_path}: {error.message}"


def _check_version(document: dict, key: str, supported: int, where: str) -> int:
    version = document.get(key)
    if isinstance(version, bool) or not isinstance(version, int):
        raise BundleError(
            f"{where}: at $.{key}: expected an integer format version, found {json.dumps(version)[:60]}: "
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


# ---- files -----------------------------------------------------------------------------------------

def _resolve(bundle_root: Path, relative: str, where: str, folders: dict[Path, Path] | None = None) -> Path:
    """The file a bundle names, refusing anything that resolves outside the bundle. `folders` keeps each
    folder resolved for the bundle's next file in it: a file that is no symlink then costs one lstat, not one
    per component of its path (the same result: a path resolves as its folder does, then its own name)."""
    if Path(relative).is_absolute():
        raise BundleError(f"{where}: {relative!r} is an absolute path: files must be named relative to the bundle")
    path = bundle_root / relative
    try:
        if folders is None or "\0" in relative or path.name in ("", ".", "..") or os.path.islink(path):
            resolved = path.resolve()
        else:
            if path.parent not in folders:
                folders[path.parent] = path.parent.resolve()
            resolved = folders[path.parent] / path.name
    except (OSError, ValueError) as error:  # a NUL, a name too long, a loop of links
        raise BundleError(f"{where}: {relative!r} cannot be a file of the bundle ({error})") from None
    if not resolved.is_relative_to(bundle_root):
        raise BundleError(
            f"{where}: {relative!r} resolves to {resolved}, outside the bundle {bundle_root}: "
            "a bundle may only name its own files (no '..', no symlinks out)"
        )
    return resolved


def _regular_size(path: Path) -> int:
    """A regular file's size (following links, as opening it will); 0 for anything else or nothing there."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return 0
    return status.st_size if stat.S_ISREG(status.st_mode) else 0


def _open_regular(path: Path, relative: str, where: str):
    """Open a regular file for reading; no symlink is followed and a FIFO or device never blocks."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BundleError(f"{where}: {relative!r} does not exist in the bundle: re-collect the bundle") from None
    except OSError as error:
        raise BundleError(f"{where}: {relative!r} cannot be opened ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise BundleError(f"{where}: {relative!r} is not a regular file")
    return os.fdopen(descriptor, "rb")


def _read_capped(handle) -> bytes:
    """A file whole, or MAX_LINE_BYTES + 1 bytes of it; read(n) would allocate all n bytes up front."""
    return handle.read(min(os.fstat(handle.fileno()).st_size, MAX_LINE_BYTES) + 1)


def _read_manifest(bundle_root: Path, display: str) -> bytes:
    with _open_regular(_resolve(bundle_root, "manifest.json", display), "manifest.json", display) as file:
        data = _read_capped(file)
    if len(data) > MAX_LINE_BYTES:
        raise BundleError(f"{display}: the manifest is larger than MAX_LINE_BYTES ({MAX_LINE_BYTES} bytes)")
    return data


def _changed(display: str) -> BundleError:
    return BundleError(f"{display}: the file changed while it was being loaded; nothing of the bundle was "
                       "loaded: run `fleetscope ingest` again once the bundle is complete")


def _read_whole(bundle_root: Path, file: BundleFile) -> bytes:
    """A raw output, all of it (its parser reads it whole), checked against its hash."""
    display = str(bundle_root / file.relative)
    with _open_regular(file.path, file.relative, display) as handle:
        data = _read_capped(handle)
    if len(data) > MAX_LINE_BYTES:
        raise BundleError(f"{display}: larger than MAX_LINE_BYTES ({MAX_LINE_BYTES} bytes) that one raw output "
                          "may hold")
    if hashlib.sha256(data).hexdigest() != file.sha256:
        raise _changed(display)
    return data


def _stream_points(bundle_root: Path, file: BundleFile, experiment: str) -> Iterator[Point]:
    display = str(bundle_root / file.relative)
    digest = hashlib.sha256()
    with _open_regular(file.path, file.relative, display) as handle:
        number = 0
        while line := handle.readline(MAX_LINE_BYTES + 1):
            number += 1
            digest.update(line)
            where = f"{display}: line {number}"
            if len(line) > MAX_LINE_BYTES:
                raise BundleError(f"{where}: longer than MAX_LINE_BYTES ({MAX_LINE_BYTES} bytes) that one point may "
                                  "take")
            complete = line.endswith(b"\n")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as error:
                raise _unreadable(where, complete, error) from None
            del line  # a point of millions of samples: its bytes go before its numbers come
            document = _parse_point(text, complete, where, experiment)
            del text  # while the point is loaded, the generator holds nothing else of it
            yield Point(experiment=experiment, point_index=number - 1, document=document)
    if digest.hexdigest() != file.sha256:
        raise _changed(display)


def _unreadable(where: str, complete: bool, error: ValueError) -> BundleError:
    if not complete:
        return BundleError(f"{where}: the last line is truncated (no newline and not complete JSON: {error}): "
                           "the experiment was interrupted while writing; re-run it or re-collect the bundle")
    return BundleError(f"{where}: not valid JSON ({error}): each line must be one JSON object")


def _parse_point(text: str, complete: bool, where: str, experiment: str) -> dict:
    try:
        document = parse_json(text)
    except ValueError as error:
        raise _unreadable(where, complete, error) from None
    if not isinstance(document, dict):
        raise BundleError(f"{where}: at $: expected a JSON object, found {type(document).__name__}")
    _check_version(document, "schema_version", SUPPORTED_POINT_SCHEMA, where)
    samples = document.get("samples")
    if isinstance(samples, list):
        problem = _samples_problem(samples, document)
        if problem:
            raise BundleError(f"{where}: {problem}")
        # the schema sees one sample (its rule for items is the one _samples_problem applied to all)
        document = {**document, "samples": samples[:1]}
    if isinstance(document.get("experiment"), str) and document["experiment"] != experiment:
        # before the schema, whose rules for params depend on the experiment
        raise BundleError(
            f"{where}: at $.experiment: {document['experiment']!r} does not match the manifest's "
            f"experiment {experiment!r} for this file: each experiment writes its own file"
        )
    context = document.get("context")
    problem = (_value_problem(document) or _POINT_SCHEMA.problem(document) or _summary_problem(document)
               or (_counters_problem(context["counters"]) if isinstance(context, dict) and "counters" in context
                   else None))
    if problem:
        raise BundleError(f"{where}: {problem}: the line must match fleetscope/schemas/point.schema.json")
    document["samples"] = samples
    return document


def _check_manifest_consistency(manifest: dict, bundle_root: Path, where: str) -> None:
    started, finished = (datetime.fromisoformat(manifest[key]).astimezone(UTC) for key in ("started_at", "finished_at"))
    if finished < started:
        raise BundleError(f"{where}: at $.finished_at: {manifest['finished_at']!r} is before $.started_at "
                          f"{manifest['started_at']!r}: a run ends after it starts; re-collect the bundle")
    for key, directory_name in (("host", bundle_root.name), ("run_id", bundle_root.parent.name)):
        if manifest[key] != directory_name:
            raise BundleError(
                f"{where}: at $.{key}: {manifest[key]!r} does not match the bundle directory name "
                f"{directory_name!r}: bundles must live at results/<run_id>/<host>/"
            )
    for key, entries in (("experiments", manifest["experiments"]), ("knobs", manifest["knobs"]),
                         ("plan.experiments", (manifest.get("plan") or {}).get("experiments") or [])):
        seen: set[str] = set()
        for index, entry in enumerate(entries):
            if entry["name"] in seen:
                raise BundleError(f"{where}: at $.{key}[{index}].name: {entry['name']!r} appears twice")
            seen.add(entry["name"])
    # the views join points to CPUs and CPUs to core kinds (cpu_core_kinds, c2c_llc_domains): a CPU or kind
    # named twice would multiply every row joined to it, as its square in c2c's pairs
    topology = manifest.get("facts", {}).get("topology") or {}
    for key, entries, field in (("cpus", topology.get("cpus") or [], "cpu"),
                                ("core_kinds", topology.get("core_kinds") or [], "kind")):
        named: set[object] = set()
        for index, entry in enumerate(entries):
            if entry[field] in named:
                raise BundleError(f"{where}: at $.facts.topology.{key}[{index}].{field}: {entry[field]!r} appears "
                                  f"twice: a host has each {'CPU' if field == 'cpu' else 'core kind'} once")
            named.add(entry[field])
    files_seen: set[str] = set()
    for index, experiment in enumerate(manifest["experiments"]):
        file = experiment.get("file")
        if experiment["status"] == "skipped" and (experiment.get("raw") or
                                                  (file is not None and os.path.lexists(bundle_root / file))):
            # a skipped experiment measured nothing: what it names would load as measurements
            raise BundleError(
                f"{where}: at $.experiments[{index}]: experiment {experiment['name']!r} is 'skipped' yet its "
                f"{'raw outputs are' if experiment.get('raw') else f'results file {file!r} is'} in the bundle: "
                "a skipped experiment measured nothing; re-collect the bundle"
            )
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


def _named_files(manifest: dict, bundle_root: Path, display: str) -> list[tuple[int, str, int | None, str]]:
    """(experiment index, relative path, raw index, where) of every file to load, in manifest order."""
    named = []
    for index, experiment in enumerate(manifest["experiments"]):
        file = experiment.get("file")
        if file is not None:
            # a failed or skipped experiment may have written nothing
            if experiment["status"] == "ok" or os.path.lexists(bundle_root / file):
                named.append((index, file, None, f"{display}: at $.experiments[{index}].file"))
        for raw_index, raw in enumerate(experiment.get("raw") or []):
            named.append((index, raw["path"], raw_index, f"{display}: at $.experiments[{index}].raw[{raw_index}].path"))
    return named


def _hash_files(manifest: dict, manifest_bytes: bytes, bundle_root: Path, display: str) -> tuple[str, list[BundleFile]]:
    """The content hash (manifest and named files, as ingest has always computed it) and each file's own
    hash; refuses a bundle larger than MAX_BUNDLE_BYTES before reading any of it."""
    folders: dict[Path, Path] = {}
    named = [(index, relative, raw_index, _resolve(bundle_root, relative, where, folders), where)
             for index, relative, raw_index, where in _named_files(manifest, bundle_root, display)]
    sizes = {relative: _regular_size(path) for _unused, relative, _unused, path, _unused in named}
    total = len(manifest_bytes) + sum(sizes.values())
    if total > MAX_BUNDLE_BYTES:
        largest = max(sizes, key=sizes.get)
        raise BundleError(f"{bundle_root}: the bundle's files take {total} bytes, more than MAX_BUNDLE_BYTES "
                          f"({MAX_BUNDLE_BYTES}) (largest: {largest}, {sizes[largest]} bytes); "
                          "nothing of it was loaded")
    content = hashlib.sha256(b"manifest.json\0" + manifest_bytes + b"\0")
    files = []
    read = len(manifest_bytes)
    for index, relative, raw_index, path, where in named:
        own = hashlib.sha256()
        content.update(relative.encode("utf-8") + b"\0")
        with _open_regular(path, relative, where) as handle:
            while chunk := handle.read(_READ_CHUNK):
                read += len(chunk)
                if read > MAX_BUNDLE_BYTES:  # it grew after it was measured
                    raise _changed(str(path))
                own.update(chunk)
                content.update(chunk)
        content.update(b"\0")
        files.append(BundleFile(index, relative, raw_index, path, own.hexdigest()))
    return content.hexdigest(), files


def _output_problems(parsed: dict) -> tuple[bool, str | None]:
    """Whether a parsed output was cut short, and what the tool itself complained about."""
    runs = parsed.get("runs") or []
    truncated = any(run.get("truncated") for run in runs)
    problems = [run["truncation"] for run in runs if run.get("truncated") and run.get("truncation")]
    problems += [f"line {error['line']}: {error['message']}" for error in parsed.get("tool_errors") or []]
    return truncated, "; ".join(problems) or None


def _json_size(value: object, limit: int) -> int:
    """About how many bytes `value` takes as JSON (each string, number and bracket counted, a shared
    object once per place it appears, as JSON writes it); the count stops once it passes `limit`."""
    size, pending = 0, [value]
    while pending and size <= limit:
        item = pending.pop()
        kind = type(item)  # the JSON types first, by type (a parser's rows are many small dicts): the same count
        if kind is str:
            size += len(item) + 2
        elif kind is dict:
            size += 2 + 4 * len(item) + sum(map(len, item))
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            size += 2 + len(item)
            pending.extend(item)
        elif kind is int or kind is float or kind is bool or item is None:
            size += 8
        elif isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2
            for key, member in item.items():
                size += len(key) + 4
                pending.append(member)
        elif isinstance(item, list | tuple):
            size += 2 + len(item)
            pending.extend(item)
        else:
            size += 8
    return size


def _parse_raw(data: bytes, experiment: dict, raw: dict, display: str, where: str) -> RawOutput:
    """Parse one raw output. An unreadable output of an 'ok' experiment refuses the bundle; one of
    a failed experiment (a tool killed half way) is kept unparsed with the reason, so the rest of
    what the host measured still loads. A value the warehouse cannot hold refuses the bundle either way."""
    tool = raw["tool"]
    module = parser(tool)
    digest = hashlib.sha256(data).hexdigest()
    budget = MAX_PARSED_FACTOR * len(data) + MAX_PARSED_SLACK
    try:
        text = decode(data)
        parsed = module.parse(text, source=display)
        spent = _json_size(parsed, budget)
        role_params = raw.get("params") or {}
        role_size = _json_size(role_params, budget)
        rows = []
        for row in module.rows(parsed):
            # the role's params go into every row: counted per row, before the row is built
            spent += role_size + _json_size(row, budget)
            if spent > budget:
                break
            rows.append({**row, "params": {**role_params, **row["params"]}})
        if spent > budget:
            raise BundleError(f"{where}: {display}: what the {tool} parser read would take more than "
                              f"{MAX_PARSED_FACTOR} times the output's {len(data)} bytes (+ {MAX_PARSED_SLACK} "
                              "bytes) to store: not an output fleetscope reads; re-collect the bundle")
        rows = tuple(rows)
    except BundleError:
        raise
    except ParseError as error:
        if experiment["status"] == "ok":
            raise BundleError(
                f"{where}: {error}: the {tool} output of an experiment marked 'ok' cannot be read; "
                "re-collect the bundle, or re-run the experiment"
            ) from None
        return RawOutput(experiment["name"], raw["path"], tool, raw.get("params") or {}, digest, len(data), None, (),
                         False, f"not loaded: {error}")
    except Exception as error:  # noqa: BLE001 - a parser broken by hostile input refuses the bundle, not the ingest
        raise BundleError(f"{where}: {display}: the {tool} parser cannot read it ({type(error).__name__}: "
                          f"{str(error)[:200]}); re-collect the bundle") from None
    problem = None if _values_fine([parsed, list(rows)]) else _value_problem(parsed, "$parsed") or next(
        (f"row {index}: {problem}" for index, row in enumerate(rows) if (problem := _value_problem(row, "$"))), None)
    if problem:
        raise BundleError(f"{where}: {display}: what the {tool} parser read is not storable: {problem}")
    truncated, note = _output_problems(parsed)
    return RawOutput(experiment["name"], raw["path"], tool, raw.get("params") or {}, digest, len(data), parsed, rows,
                     truncated, note)


def open_bundle(path: Path) -> Bundle:
    """Validate the manifest of the bundle at `path` and hash the files it names; raise BundleError on
    the first problem found. The files themselves are validated as `points()` and `raw_outputs()` read them."""
    bundle_root = Path(path).resolve()
    if not bundle_root.is_dir():
        raise BundleError(f"{path}: not a directory: a bundle is a directory results/<run_id>/<host>/")
    display = str(bundle_root / "manifest.json")
    manifest_bytes = _read_manifest(bundle_root, display)
    try:
        manifest = parse_json(manifest_bytes.decode("utf-8"))
    except ValueError as error:  # UnicodeDecodeError is one
        raise BundleError(f"{display}: not valid JSON ({error}): re-collect the bundle") from None
    if not isinstance(manifest, dict):
        raise BundleError(f"{display}: at $: expected a JSON object, found {type(manifest).__name__}")
    delivered_schema = _check_version(manifest, "bundle_schema", SUPPORTED_BUNDLE_SCHEMA, display)
    manifest = _upgrade_manifest(manifest, display)
    problem = _value_problem(manifest) or _items_problem(manifest) or _MANIFEST_SCHEMA.problem(manifest)
    if problem:
        raise BundleError(f"{display}: {problem}: the manifest must match fleetscope/schemas/manifest.schema.json")
    _check_manifest_consistency(manifest, bundle_root, display)
    content_sha256, files = _hash_files(manifest, manifest_bytes, bundle_root, display)
    return Bundle(path=bundle_root, manifest=manifest, delivered_bundle_schema=delivered_schema,
                  content_sha256=content_sha256, files=tuple(files))


def stated_content(path: Path) -> tuple[str, str, str] | None:
    """(run_id, host, content hash) of the bundle at `path`, hashed as open_bundle hashes it but with its
    manifest only parsed, not validated: ingest skips a bundle whose hash is the one of the run it already
    holds (the very bytes it validated when it loaded them) for a read and a hash of its files. None where
    the manifest is not one this fleetscope writes as is, or names something odd: open_bundle says what."""
    bundle_root = Path(path).resolve()
    display = str(bundle_root / "manifest.json")
    try:
        manifest_bytes = _read_manifest(bundle_root, display)
        manifest = parse_json(manifest_bytes.decode("utf-8"))  # its limits first: this runs before open_bundle
        if manifest.get("bundle_schema") != SUPPORTED_BUNDLE_SCHEMA or \
                (manifest.get("run_id"), manifest.get("host")) != (bundle_root.parent.name, bundle_root.name):
            return None
        content_sha256, _unused = _hash_files(manifest, manifest_bytes, bundle_root, display)
    except Exception:  # noqa: BLE001 - anything amiss is for open_bundle to find and name
        return None
    return manifest["run_id"], manifest["host"], content_sha256


def folder_signature(path: Path) -> str | None:
    """A hash of what the folder's entries look like to stat: every entry under it (relative path, type, size,
    inode, modification and change time in ns), links not followed. Ingest keeps it beside the content hash
    it validated; the same signature later means the same bytes, for a stat per file instead of a read and a
    hash of every byte (git's index does the same). The change time is the kernel's, which no copy or
    `touch` can set back. None, and the files are read and hashed again next time, where the folder has
    more than MAX_SIGNED_ENTRIES entries, cannot be listed, or an entry changed less than SIGNATURE_SETTLE_NS
    ago: a write later in that same clock tick could leave size and times as they were."""
    root = os.fspath(path)
    now = time.time_ns()
    entries = []
    try:
        pending = [root]
        while pending:
            with os.scandir(pending.pop()) as listing:
                for entry in listing:
                    if len(entries) >= MAX_SIGNED_ENTRIES:
                        return None
                    status = entry.stat(follow_symlinks=False)
                    if now - max(status.st_mtime_ns, status.st_ctime_ns) < SIGNATURE_SETTLE_NS:
                        return None
                    if stat.S_ISDIR(status.st_mode):
                        pending.append(entry.path)
                    entries.append(f"{entry.path[len(root):]}\0{status.st_mode}\0{status.st_size}\0{status.st_ino}\0"
                                   f"{status.st_dev}\0{status.st_mtime_ns}\0{status.st_ctime_ns}")
    except OSError:
        return None
    entries.sort()
    return hashlib.sha256("\n".join(entries).encode("utf-8", "surrogateescape")).hexdigest()


def load_bundle(path: Path) -> Bundle:
    """Validate the whole bundle at `path`, every file of it, and return it; raise BundleError on the
    first problem found."""
    bundle = open_bundle(path)
    for _unused in bundle.points():
        pass
    for _unused in bundle.raw_outputs():
        pass
    return bundle


def utc_timestamp(value: str) -> str:
    """An RFC 3339 timestamp from a manifest as a naive UTC ISO string (the warehouse stores UTC)."""
    return datetime.fromisoformat(value).astimezone(UTC).replace(tzinfo=None).isoformat()
