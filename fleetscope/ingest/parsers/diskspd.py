"""Microsoft DiskSpd output: the XML report (-Rxml) and the text report (default, -Rtext).

Both give the same shape. Per time span: the test time, per-direction totals (read, write, total)
with bytes, I/O count, IOPS, bandwidth (B/s), mean and standard deviation of latency (ns) when -L
measured it, the per-thread/target rows, and the latency percentiles (min = 0, 25th ... 99th,
"3-nines" = 99.9 ... "9-nines", max = 100) per direction, in ns (DiskSpd prints ms). A direction
DiskSpd marks "N/A" (no I/O of that kind) has no percentiles rather than zeros. IOPS and
bandwidth come from DiskSpd's printed I/O per s in the text report and from I/O count / test time
in the XML (which has no rate). The input parameters give the queue depth (outstanding I/Os per
thread), threads per target, block size, write ratio and access pattern.
Lines of the input-parameter and system sections that set nothing used here are skipped; in the
results any line the parser does not know is an error naming the file and line. XML with a DTD or
entity declarations is refused (the file comes from a measured host).

parse() returns
    {"tool": "diskspd", "source": str, "format": "xml" | "text", "version": "2.0.21a" | None (text),
     "computer_name": str | None, "start_time": str | None, "command_line": str | None,
     "profile": {"duration_s", "warmup_s", "cooldown_s", "measure_latency": bool,
                 "targets": [{"path", "block_size_bytes", "outstanding_ios_per_thread", "threads_per_file",
                              "write_ratio_percent", "access": "random" | "sequential" | None}]},
     "timespans": [{"index": int, "line": int, "test_time_s": float, "thread_count": int | None,
                    "proc_count": int | None, "cpu_average_percent": {"usage", "user", "kernel", "idle"} | None,
                    "totals": [{"direction": "read" | "write" | "total", "bytes", "ios", "iops",
                                "bw_bytes_per_s", "lat_mean_ns", "lat_stddev_ns", "iops_stddev"}],
                    "empty_directions": ["write", ...] (no I/O in that direction: no numbers, not zeros),
                    "threads": [{"direction", "thread", "target", "bytes", "ios", "iops", "lat_mean_ns",
                                 "lat_stddev_ns", "iops_stddev"}],
                    "percentiles": [{"direction", "percentile", "value_ns", "target": None | path}]}]}

rows() gives per time span and direction "iops" (iops), "bandwidth" (B/s), "io_bytes" (B), "ios"
(count), "latency_mean" / "latency_stddev" (ns), "iops_stddev" (iops) and "latency_percentile"
(ns, param "percentile"); params {"timespan", "direction", "block_size_bytes",
"outstanding_ios_per_thread", "threads", "write_ratio_percent", "access"} (the profile's values
when every target shares them).
"""

from __future__ import annotations

import re
from xml.etree import ElementTree
from decimal import Decimal
from xml.parsers import expat

from fleetscope.ingest.parsers import ParseError, number, sample, scaled, split_lines, text_table

DIRECTIONS = ("read", "write", "total")
MS_TO_NS = 1_000_000
_PROMPT = re.compile(r"[A-Za-z]:\\[^>]*>.*|PS [^>]*>.*")
_RESULTS = re.compile(r"Results for timespan (?P<index>\d+):")
_IO_SECTION = re.compile(r"(?P<direction>Total|Read|Write) IO")
_LATENCY_SECTION = re.compile(r"total:|Total latency distribution:|Latency distribution: (?P<target>.+)")
_SKIPPED_SECTIONS = re.compile(r"Wait Statistics|ETW:|Effective IO Distributions|\s*ETW Buffer Settings.*")
_RULE = re.compile(r"[-*]{5,}")
_PERCENTILE_LABEL = re.compile(r"(?P<n>\d+)(?:th|-nines)|min|max")
# "C:\\io.dat (1GiB)": the size after a target's path. Searched, so the blanks before it are taken from their
# first one only (the lookbehind); a search starting at each blank of a long run was quadratic in it.
_FILE_SIZE = re.compile(r"(?<!\s)\s*\(\d+(?:\.\d+)?[KMGTP]?i?B\)$")


def parse(text: str, source: str = "<input>") -> dict:
    stripped = text.removeprefix("\ufeff").lstrip()
    if not stripped:
        raise ParseError(source, 1, "empty input: expected DiskSpd XML (-Rxml) or text output")
    if stripped.startswith("<"):
        return _parse_xml(text.removeprefix("\ufeff"), source)
    return _TextReader(source).read(split_lines(text))


def _empty_result(source: str, kind: str) -> dict:
    return {"tool": "diskspd", "source": source, "format": kind, "version": None, "computer_name": None,
            "start_time": None, "command_line": None,
            "profile": {"duration_s": None, "warmup_s": None, "cooldown_s": None, "measure_latency": None,
                        "targets": []},
            "timespans": []}


def _percentile_of(label: str) -> float | None:
    """'min' -> 0, '25th' -> 25, '3-nines' -> 99.9, 'max' -> 100; None for anything else."""
    match = _PERCENTILE_LABEL.fullmatch(label)
    if match is None:
        return None
    if label in ("min", "max"):
        return 0.0 if label == "min" else 100.0
    if label.endswith("nines"):
        return float(Decimal(100) - Decimal(10) ** (2 - int(match["n"])))
    return float(match["n"])


def _rates(bytes_count: int, ios: int, iops: float | None, seconds: float | None) -> tuple[float | None, float | None]:
    """(iops, bytes per second): from DiskSpd's printed rate when there is one, else count / time."""
    if iops is None:
        if not seconds:
            return None, None
        iops = ios / seconds
        return iops, bytes_count / seconds
    return iops, (scaled(iops, Decimal(bytes_count) / ios) if ios else 0)


def _add_total(span: dict, total: dict) -> None:
    """A direction without I/O (the writes of a read test) is listed as empty: its zeros are not data."""
    if total["ios"]:
        span["totals"].append(total)
    else:
        span["empty_directions"].append(total["direction"])


# ---- text ------------------------------------------------------------------------------------


class _TextReader:
    def __init__(self, source: str):
        self.source = source
        self.result = _empty_result(source, "text")
        self.section: str | None = None  # input | system | results | cpu | io | latency | skip
        self.span: dict | None = None
        self.target: dict | None = None
        self.columns: list[str] = []
        self.direction = ""
        self.latency_target: str | None = None
        self.target_paths: set[str] = set()

    def fail(self, line: int, message: str) -> ParseError:
        return ParseError(self.source, line, message)

    def read(self, lines: list[str]) -> dict:
        for line_number, raw in enumerate(lines, start=1):
            self.feed(line_number, raw)
        if not self.result["timespans"]:
            raise ParseError(self.source, len(lines) or 1,
                             "no 'Results for timespan' section: not DiskSpd output, or the run was cut short")
        for span in self.result["timespans"]:
            if not span["totals"]:
                raise ParseError(self.source, span["line"], "the time span has no 'Total IO' table: the output is cut short")
        return self.result

    def feed(self, line: int, raw: str) -> None:
        text = raw.strip()
        if not text:
            if self.section in ("cpu", "io", "latency"):
                self.section = "results"
            return
        if text.startswith("Command Line:"):
            self.result["command_line"] = text.removeprefix("Command Line:").strip()
            self.section = None
        elif text == "Input parameters:":
            self.section = "input"
        elif text == "System information:":
            self.section = "system"
        elif match := _RESULTS.fullmatch(text):
            self.span = {"index": int(match["index"]), "line": line, "test_time_s": None, "thread_count": None,
                         "proc_count": None, "cpu_average_percent": None, "totals": [], "empty_directions": [],
                         "threads": [], "percentiles": []}
            self.result["timespans"].append(self.span)
            self.section = "results"
        elif _PROMPT.fullmatch(text):  # a Windows console prompt around the report ends any table
            if self.section in ("cpu", "io", "latency", "skip"):
                self.section = "results"
        elif self.section == "input":
            self.input_line(line, text)
        elif self.section == "system":
            self.system_line(text)
        elif self.section is None:
            raise self.fail(line, f"expected DiskSpd output ('Command Line:', 'Input parameters:'), found {text[:120]!r}")
        else:
            self.results_line(line, text)

    def input_line(self, line: int, text: str) -> None:
        profile = self.result["profile"]
        if match := re.fullmatch(r"(duration|warm up time|cool down time): (\d+)s", text):
            key = {"duration": "duration_s", "warm up time": "warmup_s", "cool down time": "cooldown_s"}[match[1]]
            profile[key] = int(match[2])
        elif text == "measuring latency":
            profile["measure_latency"] = True
        elif match := re.fullmatch(r"path: (?:template target )?'(.*)'", text):
            self.target = {"path": match[1], "block_size_bytes": None, "outstanding_ios_per_thread": None,
                           "threads_per_file": None, "write_ratio_percent": None, "access": None}
            profile["targets"].append(self.target)
            self.target_paths.add(match[1])  # a set kept as it grows: one built per results line was quadratic
        elif self.target is not None:
            self.target_line(line, text)

    def target_line(self, line: int, text: str) -> None:
        target = self.target
        if match := re.fullmatch(r"block size: (\S+)", text):
            target["block_size_bytes"] = _size(match[1], self.source, line)
        elif match := re.fullmatch(r"number of outstanding I/O operations(?: per thread)?: (\d+)", text):
            target["outstanding_ios_per_thread"] = int(match[1])
        elif match := re.fullmatch(r"threads per file: (\d+)", text):
            target["threads_per_file"] = int(match[1])
        elif text == "performing read test":
            target["write_ratio_percent"] = 0
        elif text == "performing write test":
            target["write_ratio_percent"] = 100
        elif match := re.fullmatch(r"performing mix test \(read/write ratio: (\d+)/(\d+)\)", text):
            target["write_ratio_percent"] = int(match[2])
        elif text.startswith("using random I/O"):
            target["access"] = "random"
        elif re.match(r"using (?:interlocked )?sequential I/O", text):
            target["access"] = "sequential"
        elif text.startswith("using mixed random/sequential I/O"):
            target["access"] = "mixed"

    def system_line(self, text: str) -> None:
        if match := re.fullmatch(r"computer name: (.*)", text):
            self.result["computer_name"] = match[1]
        elif match := re.fullmatch(r"start time: (.*)", text):
            self.result["start_time"] = match[1]

    def results_line(self, line: int, text: str) -> None:
        if self.span is None:
            raise self.fail(line, f"a result line outside 'Results for timespan': {text[:120]!r}")
        if match := _IO_SECTION.fullmatch(text):
            self.section, self.direction, self.columns = "io", match["direction"].lower(), []
        elif match := _LATENCY_SECTION.fullmatch(text):
            self.section, self.latency_target, self.columns = "latency", match["target"], []
        elif text in self.target_paths:
            self.section, self.latency_target, self.columns = "latency", text, []  # 2.0.x per-target table
        elif _SKIPPED_SECTIONS.fullmatch(text):
            self.section = "skip"
        elif self.section == "skip":
            pass  # ETW and wait statistics: not measurements of the storage
        elif _RULE.fullmatch(text):
            pass
        elif self.section == "cpu":
            self.cpu_line(line, text)
        elif "|" in text and re.search(r"\bCPU\b", text) and "Usage" in text:
            self.section = "cpu"
        elif self.section == "io":
            self.io_line(line, text)
        elif self.section == "latency":
            self.latency_line(line, text)
        elif match := re.fullmatch(r"actual test time:\s*(\S+)s", text):
            self.span["test_time_s"] = number(match[1], self.source, line, "actual test time")
        elif match := re.fullmatch(r"(thread|proc) count:\s*(\S+)", text):
            self.span[f"{match[1]}_count"] = number(match[2], self.source, line, f"{match[1]} count")
        else:
            raise self.fail(line, f"unrecognised line in DiskSpd results: {text[:120]!r}")

    def cpu_line(self, line: int, text: str) -> None:
        cells = [cell.strip() for cell in text.split("|")]
        if cells[0].endswith("avg."):
            values = [number(cell.removesuffix("%"), self.source, line, "CPU average") for cell in cells[-4:]]
            self.span["cpu_average_percent"] = dict(zip(("usage", "user", "kernel", "idle"), values))
            self.section = "results"

    def io_line(self, line: int, text: str) -> None:
        cells = [cell.strip() for cell in text.split("|")]
        if not self.columns:
            if cells[0] != "thread" or not {"bytes", "I/Os"} <= set(cells):
                raise self.fail(line, f"expected the column header of the {self.direction} IO table (thread | bytes | "
                                      f"I/Os | ...), found {text[:120]!r}")
            self.columns = cells
            return
        if cells[0].startswith("total:"):
            cells = ["total", cells[0].removeprefix("total:").strip(), *cells[1:]]
        columns = self.columns if cells[0] != "total" else [c for c in self.columns if c != "file"]
        if len(cells) != len(columns):
            raise self.fail(line, f"{self.direction} IO row has {len(cells)} columns, the header {len(columns)}: {text[:120]!r}")
        values = dict(zip(columns, cells))
        row = {"direction": self.direction, **self.io_values(values, line)}
        if cells[0] == "total":
            _add_total(self.span, row)
            self.section = "results"
        elif row["ios"]:
            row["thread"] = number(values["thread"], self.source, line, "thread")
            row["target"] = _FILE_SIZE.sub("", values.get("file") or "") or None
            self.span["threads"].append(row)

    def io_values(self, values: dict[str, str], line: int) -> dict:
        def value(column: str, factor: int = 1) -> int | float | None:
            if column not in values or values[column] == "N/A":
                return None
            parsed = number(values[column], self.source, line, f"{self.direction} IO {column}")
            return scaled(parsed, factor) if factor != 1 else parsed

        bytes_count, ios = value("bytes"), value("I/Os")
        iops, bandwidth = _rates(bytes_count, ios, value("I/O per s"), None)
        return {"bytes": bytes_count, "ios": ios, "iops": iops, "bw_bytes_per_s": bandwidth,
                "lat_mean_ns": value("AvgLat", MS_TO_NS), "lat_stddev_ns": value("LatStdDev", MS_TO_NS),
                "iops_stddev": value("IopsStdDev")}

    def latency_line(self, line: int, text: str) -> None:
        cells = [cell.strip() for cell in text.split("|")]
        if not self.columns:
            if cells[0] != "%-ile" or not all(cell.split() for cell in cells[1:]):
                raise self.fail(line, f"expected the '%-ile | Read (ms) | ...' header, found {text[:120]!r}")
            self.columns = [cell.split()[0].lower() for cell in cells[1:]]
            return
        percentile = _percentile_of(cells[0])
        if percentile is None or len(cells) != len(self.columns) + 1:
            raise self.fail(line, f"cannot read this latency percentile row: {text[:120]!r}")
        for direction, cell in zip(self.columns, cells[1:]):
            if cell != "N/A":
                value = number(cell, self.source, line, f"{cells[0]} {direction} latency (ms)")
                self.span["percentiles"].append({"direction": direction, "percentile": percentile,
                                                 "value_ns": scaled(value, MS_TO_NS), "target": self.latency_target})


def _size(text: str, source: str, line: int) -> int:
    """'4096', '4KiB', '1MiB' -> bytes."""
    match = re.fullmatch(r"(\d+)\s*([KMGT]i?B)?", text)
    if match is None:
        raise ParseError(source, line, f"block size: cannot read {text!r}")
    return int(match[1]) * (1 << (10 * "KMGT".index(match[2][0]) + 10) if match[2] else 1)


# ---- XML -------------------------------------------------------------------------------------


def _parse_xml(text: str, source: str) -> dict:
    root, lines = _xml_tree(text, source)
    if root.tag != "Results":
        raise ParseError(source, lines[root], f"the XML root is <{root.tag}>, DiskSpd writes <Results>")
    result = _empty_result(source, "xml")
    reader = _XmlReader(source, lines)
    result["version"] = reader.text(root, "System/Tool/Version")
    result["computer_name"] = reader.text(root, "System/ComputerName")
    result["start_time"] = reader.text(root, "System/RunTime")
    profile_span = root.find("Profile/TimeSpans/TimeSpan")
    if profile_span is not None:
        profile = result["profile"]
        profile["duration_s"] = reader.number(profile_span, "Duration")
        profile["warmup_s"] = reader.number(profile_span, "Warmup")
        profile["cooldown_s"] = reader.number(profile_span, "Cooldown")
        profile["measure_latency"] = reader.text(profile_span, "MeasureLatency") == "true"
        for target in profile_span.iterfind("Targets/Target"):
            random_access = target.find("Random") is not None
            profile["targets"].append({
                "path": reader.text(target, "Path"),
                "block_size_bytes": reader.number(target, "BlockSize"),
                "outstanding_ios_per_thread": reader.number(target, "RequestCount"),
                "threads_per_file": reader.number(target, "ThreadsPerFile"),
                "write_ratio_percent": reader.number(target, "WriteRatio"),
                "access": "random" if random_access else "sequential",
            })
    for index, span in enumerate(root.iterfind("TimeSpan"), start=1):
        result["timespans"].append(reader.timespan(index, span))
    if not result["timespans"]:
        raise ParseError(source, lines[root], "no <TimeSpan> results in <Results>: the run did not finish")
    return result


MAX_XML_DEPTH = 64  # elements nested in a diskspd XML report (as MAX_JSON_DEPTH for JSON)


def _xml_tree(text: str, source: str) -> tuple[ElementTree.Element, dict[ElementTree.Element, int]]:
    """Parse with expat directly to know each element's line; refuse DTDs and entities."""
    parser = expat.ParserCreate()
    builder = ElementTree.TreeBuilder()
    lines: dict[ElementTree.Element, int] = {}
    depth = 0

    def start(tag: str, attributes: dict[str, str]) -> None:
        nonlocal depth
        depth += 1
        if depth > MAX_XML_DEPTH:  # diskspd nests 5 deep: a tree this deep is no report, and costs more than linear
            raise ParseError(source, parser.CurrentLineNumber, f"XML nested deeper than {MAX_XML_DEPTH} elements")
        lines[builder.start(tag, attributes)] = parser.CurrentLineNumber

    def end(tag: str) -> None:
        nonlocal depth
        depth -= 1
        builder.end(tag)

    def refuse(*_: object) -> None:
        raise ParseError(source, parser.CurrentLineNumber, "XML with a DTD or entity declarations is refused")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    try:
        parser.Parse(text, True)
    except expat.ExpatError as error:
        raise ParseError(source, error.lineno, f"not valid XML: {expat.errors.messages[error.code]}") from None
    return builder.close(), lines


class _XmlReader:
    def __init__(self, source: str, lines: dict[ElementTree.Element, int]):
        self.source, self.lines = source, lines

    def text(self, element: ElementTree.Element, path: str) -> str | None:
        found = element.find(path)
        return None if found is None or found.text is None else found.text.strip()

    def number(self, element: ElementTree.Element, path: str, required: bool = False) -> int | float | None:
        found = element.find(path)
        if found is None or not (found.text or "").strip():
            if required:
                raise ParseError(self.source, self.lines[element], f"<{element.tag}> has no <{path}>")
            return None
        return number(found.text, self.source, self.lines[found], f"<{path}>")

    def timespan(self, index: int, span: ElementTree.Element) -> dict:
        seconds = self.number(span, "TestTimeSeconds", required=True)
        average = span.find("CpuUtilization/Average")
        result = {
            "index": index, "line": self.lines[span], "test_time_s": seconds,
            "thread_count": self.number(span, "ThreadCount"), "proc_count": self.number(span, "ProcCount"),
            "cpu_average_percent": None if average is None else {
                key: self.number(average, f"{key.capitalize()}Percent") for key in ("usage", "user", "kernel", "idle")},
            "totals": [], "empty_directions": [], "threads": [], "percentiles": [],
        }
        sums = {direction: [0, 0] for direction in DIRECTIONS}
        for thread in span.iterfind("Thread"):
            thread_id = self.number(thread, "Id", required=True)
            for target in thread.iterfind("Target"):
                for direction, (bytes_tag, count_tag) in (("read", ("ReadBytes", "ReadCount")),
                                                          ("write", ("WriteBytes", "WriteCount")),
                                                          ("total", ("BytesCount", "IOCount"))):
                    bytes_count = self.number(target, bytes_tag, required=True)
                    ios = self.number(target, count_tag, required=True)
                    sums[direction][0] += bytes_count
                    sums[direction][1] += ios
                    if not ios:
                        continue
                    iops, bandwidth = _rates(bytes_count, ios, None, seconds)
                    prefix = {"read": "Read", "write": "Write", "total": ""}[direction]
                    result["threads"].append({
                        "direction": direction, "thread": thread_id, "target": self.text(target, "Path"),
                        "bytes": bytes_count, "ios": ios, "iops": iops, "bw_bytes_per_s": bandwidth,
                        "lat_mean_ns": self.ms(target, f"Average{prefix}LatencyMilliseconds"),
                        "lat_stddev_ns": self.ms(target, f"{prefix}LatencyStdev"),
                        "iops_stddev": self.number(target, f"Iops/{prefix}IopsStdDev"),
                    })
        latency = span.find("Latency")
        iops_block = span.find("Iops")
        for direction, (bytes_count, ios) in sums.items():
            prefix = {"read": "Read", "write": "Write", "total": ""}[direction]
            iops, bandwidth = _rates(bytes_count, ios, None, seconds)
            _add_total(result, {
                "direction": direction, "bytes": bytes_count, "ios": ios, "iops": iops, "bw_bytes_per_s": bandwidth,
                "lat_mean_ns": None if latency is None else self.ms(latency, f"Average{prefix or 'Total'}Milliseconds"),
                "lat_stddev_ns": None if latency is None else self.ms(latency, f"{prefix}LatencyStdev"),
                "iops_stddev": None if iops_block is None else self.number(iops_block, f"{prefix}IopsStdDev"),
            })
        for bucket in span.iterfind("Latency/Bucket"):
            percentile = self.number(bucket, "Percentile", required=True)
            for direction in DIRECTIONS:
                value = self.ms(bucket, f"{direction.capitalize()}Milliseconds")
                if value is not None:
                    result["percentiles"].append({"direction": direction, "percentile": float(percentile),
                                                  "value_ns": value, "target": None})
        return result

    def ms(self, element: ElementTree.Element, path: str) -> int | float | None:
        value = self.number(element, path)
        return None if value is None else scaled(value, MS_TO_NS)


# ---- long format and summary -----------------------------------------------------------------


def _profile_params(profile: dict) -> dict:
    """The target parameters shared by every target (a value that differs between targets is left out)."""
    params = {}
    for key in ("block_size_bytes", "outstanding_ios_per_thread", "write_ratio_percent", "access"):
        values = {target[key] for target in profile["targets"]}
        if len(values) == 1:
            params[key] = values.pop()
    return params


def rows(parsed: dict) -> list[dict]:
    samples = []
    shared = _profile_params(parsed["profile"])
    for span in parsed["timespans"]:
        for total in span["totals"]:
            params = {"timespan": span["index"], "direction": total["direction"], "threads": span["thread_count"],
                      **shared}
            for metric, key, unit in (("iops", "iops", "iops"), ("bandwidth", "bw_bytes_per_s", "B/s"),
                                      ("io_bytes", "bytes", "B"), ("ios", "ios", "count"),
                                      ("latency_mean", "lat_mean_ns", "ns"), ("latency_stddev", "lat_stddev_ns", "ns"),
                                      ("iops_stddev", "iops_stddev", "iops")):
                if total[key] is not None:
                    samples.append(sample(metric, total[key], unit, **params))
        for point in span["percentiles"]:
            samples.append(sample("latency_percentile", point["value_ns"], "ns", timespan=span["index"],
                                  direction=point["direction"], percentile=point["percentile"], target=point["target"],
                                  threads=span["thread_count"], **shared))
    return samples


def table(parsed: dict) -> list[str]:
    shared = _profile_params(parsed["profile"])
    out = [f"diskspd {parsed['version'] or '(version not printed)'} ({parsed['format']}) on {parsed['computer_name'] or '?'}: "
           f"{len(parsed['timespans'])} time spans; " + ", ".join(f"{k}={v}" for k, v in shared.items())]
    for span in parsed["timespans"]:
        out.append("")
        out.append(f"time span {span['index']}: {span['test_time_s']} s, {span['thread_count']} threads")
        percentiles = {(p["direction"], p["percentile"]): p["value_ns"] for p in span["percentiles"] if p["target"] is None}
        body = [[total["direction"], total["bytes"], total["ios"], total["iops"], total["bw_bytes_per_s"],
                 total["lat_mean_ns"], percentiles.get((total["direction"], 50.0)),
                 percentiles.get((total["direction"], 99.0)), percentiles.get((total["direction"], 99.9))]
                for total in span["totals"]]
        body += [[f"{direction}: no I/O", *[None] * 8] for direction in span["empty_directions"]]
        out += text_table(["direction", "bytes", "I/Os", "iops", "B/s", "lat mean ns", "p50 ns", "p99 ns", "p99.9 ns"],
                          body)
    return out
