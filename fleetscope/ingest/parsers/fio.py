"""fio output: JSON / json+ (fio 2.x and 3.x) and terse (versions 3, 4 and 5).

fio 3.x JSON reports latencies in ns (`clat_ns`, `lat_ns`, `slat_ns`, io_bytes in bytes, `bw_bytes`);
fio 2.x reports them in µs (`clat`, `lat`, `slat`) and its `io_bytes` is in KiB (there is no
`io_kbytes`); terse output is in µs and KiB. Everything is converted to ns, bytes and B/s. Text
before, between or after the JSON document (fio's warnings, a Windows console's lines) is kept in
`messages`; several JSON documents in one file are all read. A direction a job did no I/O in
(the write side of a read job) is listed in `empty_directions` and carries no numbers: its zeros are
not measurements. `lat` and `clat` percentiles are both kept, told apart by `kind`; fio's unused
percentile slots ("0.00": 0) are dropped. The human-readable ("normal") output is refused.

parse() returns
    {"tool": "fio", "source": str, "format": "json" | "terse", "version": "3.16" | None (mixed),
     "versions": [str], "messages": [{"line": int, "text": str}],
     "documents": [{"index", "line", "version", "timestamp", "time", "global_options", "disk_util"}],
     "jobs": [job]}
    job = {"document": int, "index": int, "line": int, "name": str, "groupid": int | None,
           "error": int, "options": {...} (global options overlaid by the job's), "rw": str | None,
           "ioengine": str | None, "block_size": str | None, "iodepth": int | None,
           "iodepth_source": "job options" | "global options" | "fio default" | None (fio printed
                             no options: terse output, fio < 2.2; iodepth is then None),
           "numjobs": int | None, "iodepth_distribution_percent": {"1": 100.0, ...} | None,
           "directions": [direction], "empty_directions": ["write", ...]}
    direction = {"direction": "read" | "write" | "trim" | "sync" | "mixed", "io_bytes": int | None,
                 "total_ios": int | None, "runtime_ms": int | None, "iops": float | None,
                 "bw_bytes_per_s": float | None, "source_latency_unit": "ns" | "us",
                 "slat_ns" / "clat_ns" / "lat_ns": {"min", "max", "mean", "stddev", "samples"} | None,
                 "percentiles": [{"kind": "clat" | "lat" | "slat", "percentile": 99.9, "value_ns": int}],
                 "bw_bytes_per_s_stats": {"min", "max", "mean", "stddev", "samples"} | None,
                 "iops_stats": {"min", "max", "mean", "stddev", "samples"} | None}

rows() gives per job and direction: "iops" (iops), "bandwidth" (B/s), "io_bytes" (B),
"{slat,clat,lat}_{min,max,mean,stddev}" (ns) and "{clat,lat,slat}_percentile" (ns, params
"percentile"); params {"job", "document", "direction", "rw", "iodepth", "block_size", "numjobs",
"ioengine"}.
"""

from __future__ import annotations

import json
import math
import re

from fleetscope.ingest.parsers.json_limits import json_limits_problem
from fleetscope.ingest.parsers import ParseError, number, sample, scaled, split_lines, text_table

DIRECTIONS = ("read", "write", "trim", "sync", "mixed")
LATENCY_KINDS = ("slat", "clat", "lat")
_STATS = (("min", "min"), ("max", "max"), ("mean", "mean"), ("stddev", "stddev"), ("N", "samples"))
_DOCUMENT_START = re.compile(r"^[ \t]*\{", re.MULTILINE)
_JOBNAME = re.compile(r'"jobname"\s*:')
_TERSE_HEADER = re.compile(r"terse_version_\d+;")
_TERSE_ROW = re.compile(r"(?P<version>\d+);fio-")
_PERCENTILE_CELL = re.compile(r"(?P<percentile>\d+(?:\.\d+)?)%=(?P<value>-?\d+)")
_MESSAGE = re.compile(r"(?:fio|note|warning|error)\b.*", re.IGNORECASE)
# (searched: a leading \s* would retry at each character of a long blank run, quadratic in its length)
_NORMAL_OUTPUT = re.compile(r"Run status group|(?:read|write)\s*:\s*IOPS=|Starting \d+ process")
_TERSE_DEPTHS = ("1", "2", "4", "8", "16", "32", ">=64")


def parse(text: str, source: str = "<input>") -> dict:
    normalized = "\n".join(split_lines(text))
    if not normalized.strip():
        raise ParseError(source, 1, "empty input: expected fio JSON or terse output")
    if _DOCUMENT_START.search(normalized):
        result = _parse_json(normalized, source)
    elif any(_TERSE_ROW.match(line) for line in normalized.split("\n")):
        result = _parse_terse(normalized, source)
    else:
        line = _first_content_line(normalized)
        if _NORMAL_OUTPUT.search(normalized):
            raise ParseError(source, line, "this is fio's human-readable output, which carries rounded numbers: "
                                           "run fio with --output-format=json (or json+, terse)")
        raise ParseError(source, line, "expected fio JSON or terse output, found "
                                       f"{normalized.split(chr(10))[line - 1].strip()[:120]!r}")
    versions = list(dict.fromkeys(document["version"] for document in result["documents"] if document["version"]))
    return {"tool": "fio", "source": source, "format": result["format"],
            "version": versions[0] if len(versions) == 1 else None, "versions": versions,
            "messages": result["messages"], "documents": result["documents"], "jobs": result["jobs"]}


def _first_content_line(text: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), start=1) if line.strip())


class _Lines:
    """Line numbers of offsets asked for in increasing order, counted on from the last one: counting from
    the start of the text each time cost a file of many small documents quadratic time."""

    def __init__(self, text: str):
        self.text, self.offset, self.line = text, 0, 1

    def __call__(self, offset: int) -> int:
        if offset < self.offset:
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _messages(text: str, start: int, end: int, line_of: _Lines) -> list[dict]:
    """Non-blank lines of text[start:end] (outside any JSON document) with their line numbers."""
    first = line_of(start)
    return [
        {"line": first + offset, "text": line.strip()}
        for offset, line in enumerate(text[start:end].split("\n"))
        if line.strip()
    ]


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


# ---- JSON ------------------------------------------------------------------------------------


def _parse_json(text: str, source: str) -> dict:
    problem = json_limits_problem(text)
    if problem:
        raise ParseError(source, None, f"not fio JSON fleetscope reads: {problem}")
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    line_of = _Lines(text)
    documents, jobs, messages = [], [], []
    position = 0
    while match := _DOCUMENT_START.search(text, position):
        messages += _messages(text, position, match.start(), line_of)
        start = match.end() - 1
        try:
            document, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            raise ParseError(source, error.lineno, f"not valid fio JSON: {error.msg} (column {error.colno})") from None
        except ValueError as error:
            raise ParseError(source, line_of(start), f"not valid fio JSON: {error}") from None
        line = line_of(start)
        if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
            raise ParseError(source, line, "a JSON document without a 'jobs' list is not fio output")
        job_lines = [line_of(m.start()) for m in _JOBNAME.finditer(text, start, end)]
        index = len(documents)
        documents.append({
            "index": index,
            "line": line,
            "version": _version(document.get("fio version")),
            "timestamp": document.get("timestamp"),
            "time": document.get("time"),
            "global_options": document.get("global options") or {},
            "disk_util": document.get("disk_util") or [],
        })
        for job_index, job in enumerate(document["jobs"]):
            job_line = job_lines[job_index] if job_index < len(job_lines) else line
            jobs.append(_json_job(job, documents[-1], job_index, _Where(source, job_line, f"jobs[{job_index}]")))
        position = end
    messages += _messages(text, position, len(text), line_of)
    return {"format": "json", "documents": documents, "jobs": jobs, "messages": messages}


class _Where:
    """Where a JSON value sits, for error messages: file, line of the job and a JSON path."""

    def __init__(self, source: str, line: int, path: str):
        self.source, self.line, self.path = source, line, path

    def __truediv__(self, key: str) -> _Where:
        return _Where(self.source, self.line, f"{self.path}.{key}")

    def error(self, message: str) -> ParseError:
        return ParseError(self.source, self.line, f"{self.path}: {message}")

    def number(self, value: object) -> int | float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(f"expected a number, found {json.dumps(value)[:120]}")
        # as parsers.number: a double's range and 64 bits (JSON's 1e999 is an infinity, and a scaled one
        # has no integer value)
        if isinstance(value, float) and not math.isfinite(value) or \
                isinstance(value, int) and not -(2**63) <= value < 2**64:
            raise self.error(f"{json.dumps(value)[:40]} is not a number fio writes (beyond a double or 64 bits)")
        return value


def _version(text: object) -> str | None:
    return text.removeprefix("fio-") if isinstance(text, str) else None


def _json_job(job: object, document: dict, index: int, where: _Where) -> dict:
    if not isinstance(job, dict) or not isinstance(job.get("jobname"), str):
        raise where.error("a job must be an object with a 'jobname'")
    job_options = job.get("job options") or {}
    options = {**document["global_options"], **job_options}
    # fio prints the options it was given; without any (fio < 2.2 printed none) the depth is unknown
    iodepth_source = next((name for name, scope in (("job options", job_options),
                                                    ("global options", document["global_options"]))
                           if "iodepth" in scope), "fio default" if "job options" in job else None)
    result = _job_frame(document["index"], index, where.line, job["jobname"], options)
    result["groupid"] = job.get("groupid")
    result["error"] = (where / "error").number(job.get("error", 0))
    if iodepth_source is not None:
        result["iodepth"] = _integer_option(options.get("iodepth", "1"))
        result["iodepth_source"] = iodepth_source
    for direction in DIRECTIONS:
        if direction in job:
            parsed = _json_direction(direction, job[direction], where / direction)
            (result["directions"].append(parsed) if parsed else result["empty_directions"].append(direction))
    if not result["directions"] and not result["empty_directions"]:
        raise where.error(f"job {job['jobname']!r} has none of the directions {', '.join(DIRECTIONS[:3])}")
    return result


def _job_frame(document: int, index: int, line: int, name: str, options: dict) -> dict:
    return {
        "document": document, "index": index, "line": line, "name": name, "groupid": None, "error": 0,
        "options": options, "rw": options.get("rw") or options.get("readwrite"),
        "ioengine": options.get("ioengine"), "block_size": options.get("bs") or options.get("blocksize"),
        "iodepth": None, "iodepth_source": None, "numjobs": _integer_option(options.get("numjobs")),
        "iodepth_distribution_percent": None, "directions": [], "empty_directions": [],
    }


def _integer_option(value: object) -> int | None:
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def _json_direction(name: str, data: object, where: _Where) -> dict | None:
    if not isinstance(data, dict):
        raise where.error(f"expected an object, found {json.dumps(data)[:60]}")
    in_ns = any(f"{kind}_ns" in data for kind in LATENCY_KINDS)
    factor = 1 if in_ns else 1000
    total_ios = (where / "total_ios").number(data["total_ios"]) if "total_ios" in data else None
    if name == "sync":
        if not total_ios:
            return None
        io_bytes = runtime = iops = bw = None
    else:
        for key in ("io_bytes", "iops", "runtime", "bw"):
            if key not in data:
                raise where.error(f"no '{key}': not a fio direction object")
        # fio 2.x wrote KiB into "io_bytes" (and had no "io_kbytes"); bw is KiB/s in every version
        io_bytes = (where / "io_bytes").number(data["io_bytes"]) * (1 if "io_kbytes" in data else 1024)
        iops = (where / "iops").number(data["iops"])
        runtime = (where / "runtime").number(data["runtime"])
        bw = (where / "bw_bytes").number(data["bw_bytes"]) if "bw_bytes" in data else \
            scaled((where / "bw").number(data["bw"]), 1024)
        empty = total_ios == 0 if total_ios is not None else (io_bytes == 0 and iops == 0)
        if empty:
            return None
    result = {
        "direction": name, "io_bytes": io_bytes, "total_ios": total_ios, "runtime_ms": runtime,
        "iops": iops, "bw_bytes_per_s": bw, "source_latency_unit": "ns" if in_ns else "us",
        "percentiles": [],
    }
    for kind in LATENCY_KINDS:
        key = f"{kind}_ns" if in_ns else kind
        block = data.get(key)
        if block is None:
            result[f"{kind}_ns"] = None
            continue
        if not isinstance(block, dict):
            raise (where / key).error(f"expected an object, found {json.dumps(block)[:60]}")
        result[f"{kind}_ns"] = {
            label: scaled((where / key / stat).number(block[stat]), factor) if stat != "N"
            else (where / key / stat).number(block[stat])
            for stat, label in _STATS if stat in block
        }
        for percentile, value in (block.get("percentile") or {}).items():
            point = _percentile_key(percentile, where / key / "percentile")
            if point:  # fio pads the map with "0.00": 0 slots
                value_ns = scaled((where / key / "percentile" / percentile).number(value), factor)
                result["percentiles"].append({"kind": kind, "percentile": point, "value_ns": value_ns})
    result["bw_bytes_per_s_stats"] = _sample_stats(data, "bw", {"min": "bw_min", "max": "bw_max", "mean": "bw_mean",
                                                                "stddev": "bw_dev", "samples": "bw_samples"}, 1024, where)
    result["iops_stats"] = _sample_stats(data, "iops", {"min": "iops_min", "max": "iops_max", "mean": "iops_mean",
                                                        "stddev": "iops_stddev", "samples": "iops_samples"}, 1, where)
    return result


def _percentile_key(key: str, where: _Where) -> float:
    try:
        return float(key)
    except ValueError:
        raise where.error(f"percentile key {key!r} is not a number") from None


def _sample_stats(data: dict, prefix: str, keys: dict[str, str], factor: int, where: _Where) -> dict | None:
    """fio's per-interval bandwidth (KiB/s) or IOPS statistics; None when fio took no samples."""
    present = {label: (where / key).number(data[key]) for label, key in keys.items() if key in data}
    if not present or not present.get("samples", 1):
        return None
    return {label: value if label == "samples" else scaled(value, factor) for label, value in present.items()}


# ---- terse -----------------------------------------------------------------------------------


def _parse_terse(text: str, source: str) -> dict:
    documents: dict[str, dict] = {}
    jobs, messages = [], []
    for line_number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or _TERSE_HEADER.match(stripped):
            continue
        if not _TERSE_ROW.match(stripped):
            if _MESSAGE.fullmatch(stripped):
                messages.append({"line": line_number, "text": stripped})
                continue
            raise ParseError(source, line_number, f"expected a fio terse row ('3;fio-...'), found {stripped[:120]!r}")
        fields = stripped.split(";")
        version = fields[1].removeprefix("fio-")
        if version not in documents:
            documents[version] = {"index": len(documents), "line": line_number, "version": version, "timestamp": None,
                                  "time": None, "global_options": {}, "disk_util": []}
        jobs.append(_terse_job(fields, documents[version]["index"], len(jobs), source, line_number))
    return {"format": "terse", "documents": list(documents.values()), "jobs": jobs, "messages": messages}


def _terse_job(fields: list[str], document: int, index: int, source: str, line: int) -> dict:
    terse_version = int(fields[0])
    if terse_version not in (3, 4, 5):
        raise ParseError(source, line, f"fio terse version {terse_version} is not supported (3, 4 or 5 are)")
    group_size = 47 if terse_version == 5 else 41
    directions = ("read", "write") if terse_version == 3 else ("read", "write", "trim")
    needed = 5 + group_size * len(directions) + 34
    if len(fields) < needed:
        raise ParseError(source, line, f"terse v{terse_version} row has {len(fields)} fields, at least {needed} expected "
                                       "(the line is cut short)")
    cursor = _Cursor(fields, source, line)
    cursor.skip(2)
    name = cursor.text()
    result = _job_frame(document, index, line, name, {})
    result["groupid"] = cursor.number("groupid")
    result["error"] = cursor.number("error")
    for direction in directions:
        parsed = _terse_direction(direction, cursor, terse_version)
        (result["directions"].append(parsed) if parsed else result["empty_directions"].append(direction))
    cursor.skip(5)  # CPU usage: user, system, context switches, major and minor faults
    result["iodepth_distribution_percent"] = {
        depth: cursor.number(f"I/O depth {depth} (%)", percent=True) for depth in _TERSE_DEPTHS
    }
    return result


class _Cursor:
    """Reads the ;-separated fields of one terse row in order, naming the field in errors."""

    def __init__(self, fields: list[str], source: str, line: int):
        self.fields, self.source, self.line, self.position = fields, source, line, 0

    def skip(self, count: int) -> None:
        self.position += count

    def text(self) -> str:
        self.position += 1
        return self.fields[self.position - 1]

    def number(self, what: str, percent: bool = False) -> int | float:
        field = self.text()
        if percent:
            field = field.removesuffix("%")
        return number(field, self.source, self.line, f"field {self.position} ({what})")

    def percentile(self, what: str) -> tuple[float, int | float] | None:
        field = self.text()
        match = _PERCENTILE_CELL.fullmatch(field)
        if match is None:
            raise ParseError(self.source, self.line, f"field {self.position} ({what}): expected 'P%=VALUE', found {field!r}")
        return float(match["percentile"]), number(match["value"], self.source, self.line, what)


def _terse_direction(name: str, cursor: _Cursor, terse_version: int) -> dict | None:
    io_kib, bw_kib, iops, runtime = (cursor.number(f"{name} {what}") for what in ("total IO (KiB)", "bandwidth (KiB/s)",
                                                                                  "IOPS", "runtime (ms)"))
    result = {"direction": name, "io_bytes": scaled(io_kib, 1024), "total_ios": None, "runtime_ms": runtime,
              "iops": iops, "bw_bytes_per_s": scaled(bw_kib, 1024), "source_latency_unit": "us", "percentiles": []}
    for kind in ("slat", "clat"):
        result[f"{kind}_ns"] = _terse_stats(cursor, f"{name} {kind}")
    for _unused in range(20):
        percentile, value = cursor.percentile(f"{name} clat percentile")
        if percentile:  # "0%=0" fills unused slots
            result["percentiles"].append({"kind": "clat", "percentile": percentile, "value_ns": scaled(value, 1000)})
    result["lat_ns"] = _terse_stats(cursor, f"{name} lat")
    bw = [cursor.number(f"{name} bandwidth {what}", percent=True) for what in ("min", "max", "agg %", "mean", "stddev")]
    result["bw_bytes_per_s_stats"] = {"min": scaled(bw[0], 1024), "max": scaled(bw[1], 1024),
                                      "mean": scaled(bw[3], 1024), "stddev": scaled(bw[4], 1024)}
    result["iops_stats"] = None
    if terse_version == 5:
        result["bw_bytes_per_s_stats"]["samples"] = cursor.number(f"{name} bandwidth samples")
        values = [cursor.number(f"{name} IOPS {what}") for what in ("min", "max", "mean", "stddev", "samples")]
        result["iops_stats"] = dict(zip(("min", "max", "mean", "stddev", "samples"), values))
    if io_kib == 0 and iops == 0:
        return None
    return result


def _terse_stats(cursor: _Cursor, what: str) -> dict:
    values = [cursor.number(f"{what} {stat} (us)") for stat in ("min", "max", "mean", "stddev")]
    return {stat: scaled(value, 1000) for stat, value in zip(("min", "max", "mean", "stddev"), values)}


# ---- long format and summary -----------------------------------------------------------------


def rows(parsed: dict) -> list[dict]:
    samples = []
    for job in parsed["jobs"]:
        for direction in job["directions"]:
            params = {"job": job["name"], "document": job["document"], "direction": direction["direction"],
                      "rw": job["rw"], "iodepth": job["iodepth"], "block_size": job["block_size"],
                      "numjobs": job["numjobs"], "ioengine": job["ioengine"]}
            for metric, key, unit in (("iops", "iops", "iops"), ("bandwidth", "bw_bytes_per_s", "B/s"),
                                      ("io_bytes", "io_bytes", "B")):
                if direction[key] is not None:
                    samples.append(sample(metric, direction[key], unit, **params))
            for kind in LATENCY_KINDS:
                for stat, value in (direction[f"{kind}_ns"] or {}).items():
                    if stat != "samples":
                        samples.append(sample(f"{kind}_{stat}", value, "ns", **params))
            for point in direction["percentiles"]:
                samples.append(sample(f"{point['kind']}_percentile", point["value_ns"], "ns",
                                      **params, percentile=point["percentile"]))
    return samples


def table(parsed: dict) -> list[str]:
    out = [f"fio {parsed['version'] or '/'.join(parsed['versions']) or '?'} ({parsed['format']}): "
           f"{len(parsed['jobs'])} jobs"]
    out += [f"message at line {message['line']}: {message['text']}" for message in parsed["messages"]]
    body = []
    for job in parsed["jobs"]:
        for direction in job["directions"]:
            percentiles = {(p["kind"], p["percentile"]): p["value_ns"] for p in direction["percentiles"]}
            kind = "clat" if any(k == "clat" for k, _unused in percentiles) else "lat"
            body.append([job["name"], direction["direction"], job["iodepth"], job["block_size"], direction["iops"],
                         direction["bw_bytes_per_s"], (direction["clat_ns"] or direction["lat_ns"] or {}).get("mean"),
                         percentiles.get((kind, 50.0)), percentiles.get((kind, 99.0)), percentiles.get((kind, 99.9))])
        if job["empty_directions"]:
            body.append([job["name"], "no I/O: " + ",".join(job["empty_directions"]), *[None] * 8])
    out += text_table(["job", "direction", "iodepth", "bs", "iops", "B/s", "clat mean ns", "p50 ns", "p99 ns",
                       "p99.9 ns"], body)
    return out
