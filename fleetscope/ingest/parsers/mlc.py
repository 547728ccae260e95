"""Intel Memory Latency Checker (MLC) text output.

Accepts what MLC 3.x prints (3.1a to 3.11b wording) for every mode: --idle_latency (one latency for
one buffer size, i.e. one cache level or DRAM), --loaded_latency (the injected-delay ladder),
--peak_injection_bandwidth, --max_bandwidth, --latency_matrix, --bandwidth_matrix, --c2c_latency,
and the default run that prints several of them. Columns may be separated by TABs or spaces, lines
may carry an indent (copies pasted into documents) and a shell or Windows prompt line
(`$ sudo ./mlc ...`, `E:\\mlc>mlc ...`). Several runs may follow each other in one file, with or
without `==== Run N ====` separators. A run cut short (a partial ladder row, `Exiting...`, a default
ladder that stops before 20000 cycles, a ratio list without its last line, a section with no rows)
is kept and flagged `truncated`.
With -T ("throughput threads only") MLC prints 0.00 for the latency: that becomes None, not 0.
Bandwidths are MB/s = 1e6 B/s, as MLC declares; a file declaring another MB is converted.
A usage text (`Invalid Argument`) is recorded in `tool_errors`; any other line the parser does not
know raises ParseError naming the file and line.

parse() returns
    {"tool": "mlc", "source": str, "version": "3.11b" | None (None when the file mixes versions),
     "versions": [str], "invocations": int, "tool_errors": [{"line": int, "message": str}],
     "runs": [run]}
with one run per measurement section:
    {"mode": "idle_latency" | "loaded_latency" | "peak_injection_bandwidth" | "max_bandwidth" |
             "latency_matrix" | "bandwidth_matrix" | "c2c_latency" | None (output ended before MLC
             said what it measures),
     "invocation": int (0-based; the sections of one MLC process share it), "label": "Run 2" | None,
     "version": str | None, "command": str | None (prompt line), "command_line": str | None,
     "options": {"W": "6", "c": "0", ...}, "line": int, "end_line": int,
     "buffer": {"printed": "100.000MiB", "bytes": int, "per_thread": bool, "from": "-b" | "printed"} | None,
     "traffic": "read-only" | "W6" | None, "traffic_description": str | None,
     "access": "random" | "sequential" | None, "threads_per_core": "all" | "one" | None,
     "throughput_only": bool, "truncated": bool, "truncation": str | None, "notes": [str],
     "rows": [row]}
rows by mode (each row also has "line"):
    idle_latency              {"latency_ns", "clocks", "clock": "core" | "base frequency"}
    loaded_latency            {"delay_cycles", "latency_ns" (None with -T), "bandwidth_mb_s"}
    peak_injection_bandwidth,
    max_bandwidth             {"traffic": "all_reads" | "3:1_reads_writes" | ... | "stream_triad_like",
                               "label": "ALL Reads", "bandwidth_mb_s"}
    latency_matrix            {"cpu_node", "memory_node", "latency_ns"}   (cpu_node: a socket on old
    bandwidth_matrix          {"cpu_node", "memory_node", "bandwidth_mb_s"} single-node headers)
    c2c_latency               {"scope": "local_socket", "path": "L2->L2", "transfer": "HIT" | "HITM",
                               "latency_ns"} or, from the remote matrices, the same with
                               "scope": "remote_socket", "homed_in": "writer" | "reader",
                               "writer_node", "reader_node" ("-" cells are not measurements: omitted)

rows() flattens to samples: metric "latency" (ns), "latency_clocks" (clocks) or "bandwidth" (MB/s),
params {"mode", "run", "invocation", "buffer_bytes", "traffic", "access", ...the row's keys}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fleetscope.ingest.parsers import ParseError, number, sample, scaled, split_lines, text_table

MODES = (
    "idle_latency", "loaded_latency", "peak_injection_bandwidth", "max_bandwidth",
    "latency_matrix", "bandwidth_matrix", "c2c_latency",
)
# MLC's default injected-delay ladder (cycles), the same from 3.5 to 3.11b.
DEFAULT_DELAYS = (0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000)
# -Wn read/write mixes, as MLC's usage text describes them.
TRAFFIC_MIXES = {
    "2": "2:1 read-write", "3": "3:1 read-write", "4": "3:2 read-write", "5": "1:1 read-write",
    "6": "0:1 read-non-temporal write", "7": "2:1 read-non-temporal write",
    "8": "1:1 read-non-temporal write", "9": "3:1 read-non-temporal write",
    "10": "2:1 read-non-temporal write (stream triad-like)",
    "11": "3:1 read-write (stream triad-like with RFO)", "12": "4:1 read-write",
}
# The read-write mixes --peak_injection_bandwidth and --max_bandwidth print, in order.
RATIO_TRAFFIC = ("all_reads", "3:1_reads_writes", "2:1_reads_writes", "1:1_reads_writes", "stream_triad_like")
_SIZE_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
# Setting and warning lines MLC prints before a measurement (it prints one or two); each run copies them.
MAX_NOTES = 32
_NUM = r"\d+(?:\.\d+)?"

# Every pattern here meets a host's text: each is written so that no two of its repeated parts can take the
# same characters (or takes them possessively), so a line costs time linear in its length whatever it
# holds. `Each iteration took 1 <N spaces>x` cost N^3 steps in the pattern this replaced
# (benchmarks/pumped_lines.py sweeps every line of the real outputs for such cases).
_BANNER = re.compile(r"Intel\(R\) Memory Latency Checker\s*+(?:-\s*+)?v?(?P<version>\d+(?:\.\d+)*[a-z]?)\b.*")
_PROMPT = re.compile(r"(?:\$|#|[A-Za-z]:\\[^>]*>|PS [^>]*>)\s*(?P<command>.*)")
_SEPARATOR = re.compile(r"={2,}+\s*+(?P<label>[^=]*[^=\s])\s*={2,}")
_COMMAND_LINE = re.compile(r"Command line parameters:\s*(?P<parameters>.*)")
_BUFFER = re.compile(rf"Using buffer size of (?P<size>{_NUM})\s*(?P<unit>[KMG]i?B)(?P<per_thread>/thread)?\b.*")
_MB_DECLARATION = re.compile(r"Bandwidths are in MB/sec \(1 MB/sec = (?P<bytes>[\d,]+) Bytes/sec\)")
# the clock's name runs up to "clocks" before the parenthesis (core clocks, base frequency clocks)
_IDLE = re.compile(rf"Each iteration took\s++(?P<clocks>{_NUM})\s++(?P<clock>[^(]*)\(\s*+(?P<ns>{_NUM})\s*+ns\s*+\)")
_LADDER_ROW = re.compile(rf"(?P<delay>\d+)\s+(?P<latency>{_NUM})\s+(?P<bandwidth>{_NUM})")
_LADDER_PARTIAL = re.compile(rf"(?P<delay>\d+)(?:\s+{_NUM})?")
_LADDER_HEADERS = (re.compile(r"Inject\s+Latency\s+Bandwidth"), re.compile(r"Delay\s+\(ns\)\s+MB/sec"))
_RULE = re.compile(r"={5,}")
_RATIO_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9:\- ]*")
_NUMBER = re.compile(_NUM)
_MATRIX_TITLE = re.compile(r"(?:(?:Numa|Memory|Reader Numa) [Nn]ode\s*)+")
_MATRIX_COLUMNS = re.compile(r"(?P<kind>Numa node|Socket|Writer Numa Node)\s+(?P<ids>\d+(?:\s+\d+)*)")
_MATRIX_ROW = re.compile(r"(?P<id>\d+)\s+(?P<cells>\S.*)")
_C2C_LOCAL = re.compile(rf"(?P<scope>Local|Remote) Socket (?P<path>\S+)\s+(?P<transfer>[A-Z]+)\s+latency\s+(?P<ns>{_NUM})")
_C2C_REMOTE = re.compile(
    r"(?P<scope>Local|Remote) Socket (?P<path>\S+)\s+(?P<transfer>[A-Z]+)\s+latency\s*"
    r"\(data address homed in (?P<homed>\w+) socket\)"
)
# "Measuring ..." opens a section; older MLC said "Peak Memory Bandwidths" for the peak injection mode.
_SECTIONS = (
    (re.compile(r"Measuring idle latencies(?: for (?P<access>\w+) access)?"), "latency_matrix"),
    (re.compile(r"Measuring (?:Peak Injection|Peak) Memory Bandwidths"), "peak_injection_bandwidth"),
    (re.compile(r"Measuring Maximum Memory Bandwidths"), "max_bandwidth"),
    (re.compile(r"Measuring Memory Bandwidths between nodes"), "bandwidth_matrix"),
    (re.compile(r"Measuring Loaded Latencies"), "loaded_latency"),
    (re.compile(r"Measuring cache-to-cache transfer latency"), "c2c_latency"),
)
_IGNORED_PROSE = (
    re.compile(r"Will take several minutes.*"),
    re.compile(r"Using traffic with the following read-write ratios"),
)


@dataclass
class _Invocation:
    """One MLC process: its banner, command line and the settings printed before a section."""

    index: int
    line: int
    label: str | None = None
    command: str | None = None
    version: str | None = None
    command_line: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sections: int = 0
    failed: bool = False

    @property
    def started(self) -> bool:
        return bool(self.version or self.command_line or self.command)


class _Reader:
    def __init__(self, source: str):
        self.source = source
        self.runs: list[dict] = []
        self.tool_errors: list[dict] = []
        self.invocations: list[_Invocation] = []
        self.invocation: _Invocation | None = None
        self.run: dict | None = None
        self.state: str | None = None  # what the next lines of the open section may be
        self.matrix: dict = {}
        self.usage = False
        self.mb_bytes = 1_000_000

    def fail(self, line: int, message: str) -> ParseError:
        return ParseError(self.source, line, message)

    # ---- invocations -------------------------------------------------------------------------

    def new_invocation(self, line: int, **fields) -> _Invocation:
        self.close_invocation(line - 1)
        self.invocation = _Invocation(index=len(self.invocations), line=line, **fields)
        self.invocations.append(self.invocation)
        self.usage = False
        self.mb_bytes = 1_000_000
        return self.invocation

    def current_invocation(self, line: int) -> _Invocation:
        return self.invocation or self.new_invocation(line)

    def close_invocation(self, last_line: int) -> None:
        self.close_run(last_line)
        invocation = self.invocation
        if invocation is not None and invocation.started and not invocation.sections and not invocation.failed:
            mode = _mode_from_options(invocation.command_line)
            run = self.open_run(mode, invocation.line)
            run["end_line"] = max(last_line, invocation.line)
            _mark_truncated(run, "the output ends before MLC printed any measurement")
            self.run = None
        self.invocation = None

    # ---- runs (sections) ---------------------------------------------------------------------

    def open_run(self, mode: str | None, line: int) -> dict:
        self.close_run(line - 1)
        invocation = self.current_invocation(line)
        invocation.sections += 1
        settings = invocation.settings
        self.run = {
            "mode": mode,
            "invocation": invocation.index,
            "label": invocation.label,
            "version": invocation.version,
            "command": invocation.command,
            "command_line": invocation.command_line,
            "options": dict(invocation.options),
            "line": line,
            "end_line": line,
            "buffer": settings.get("buffer"),
            "traffic": settings.get("traffic"),
            "traffic_description": settings.get("traffic_description"),
            "access": settings.get("access"),
            "threads_per_core": settings.get("threads_per_core"),
            "throughput_only": "T" in invocation.options,
            "truncated": False,
            "truncation": None,
            "notes": list(invocation.notes),
            "rows": [],
        }
        if self.run["traffic"] is None and "W" in invocation.options and mode == "loaded_latency":
            self.run["traffic"] = f"W{invocation.options['W']}"
            self.run["traffic_description"] = TRAFFIC_MIXES.get(invocation.options["W"])
        self.runs.append(self.run)
        self.state = None
        return self.run

    def close_run(self, last_line: int) -> None:
        run = self.run
        if run is None:
            return
        run["end_line"] = max(run["end_line"], last_line)
        if not run["rows"] and not run["truncated"]:
            _mark_truncated(run, "the section ends before its first measurement")
        if run["mode"] == "loaded_latency":
            _check_ladder(run)
        elif run["mode"] in ("peak_injection_bandwidth", "max_bandwidth") and run["rows"] \
                and run["rows"][-1]["traffic"] != RATIO_TRAFFIC[-1]:
            _mark_truncated(run, f"the read-write ratio list stops after {run['rows'][-1]['label']!r}; "
                                 f"MLC ends it with 'Stream-triad like'")
        self.run = None
        self.state = None

    def set_setting(self, key: str, value: object) -> None:
        if self.run is not None:
            self.run[key] = value
        else:
            self.invocation.settings[key] = value

    def add_note(self, line: int, note: str) -> None:
        notes = self.run["notes"] if self.run is not None else self.invocation.notes
        if len(notes) >= MAX_NOTES:
            # every run of the invocation copies its notes: unbounded, they would cost runs x notes
            raise self.fail(line, f"more than {MAX_NOTES} setting and warning lines ('***', 'Using ...') before one "
                                  "measurement: not MLC output")
        notes.append(note)

    def add_row(self, line: int, row: dict) -> None:
        row["line"] = line
        self.run["rows"].append(row)
        self.run["end_line"] = line

    # ---- lines -------------------------------------------------------------------------------

    def feed(self, line: int, raw: str) -> None:
        text = raw.strip()
        if not text:  # a blank line ends a table, not the section
            if self.state in ("ladder_rows", "ratios"):
                self.state = None
            elif self.state == "matrix_rows":
                self.state = self.matrix.get("resume")
            return
        if self.boundary(line, text) or self.usage:
            return
        invocation = self.current_invocation(line)
        if self.run is not None and self.state is not None and self.table_line(line, text):
            return
        if self.prose(line, text, invocation):
            return
        raise self.fail(line, f"unrecognised MLC output: {text[:120]!r}")

    def boundary(self, line: int, text: str) -> bool:
        """Lines that start or end an invocation: prompt, separator, banner, command line, errors."""
        if match := _SEPARATOR.fullmatch(text):
            self.new_invocation(line, label=match["label"])
            return True
        if match := _PROMPT.fullmatch(text):
            command = match["command"].strip()
            if re.search(r"\bmlc(?:\.exe)?\b", command, re.IGNORECASE):
                label = self.invocation.label if self._fresh_labelled() else None
                self.new_invocation(line, command=command, label=label)
            elif command:
                raise self.fail(line, f"a prompt line running something other than mlc: {text[:120]!r}")
            return True
        if match := _BANNER.fullmatch(text):
            invocation = self.invocation
            if invocation is not None and invocation.version is not None and not invocation.sections \
                    and not invocation.failed and invocation.version == match["version"]:
                return True  # MLC repeats its banner before some measurements
            if invocation is None or invocation.version is not None or invocation.sections or invocation.failed:
                invocation = self.new_invocation(line)
            invocation.version = match["version"]
            return True
        if self.usage:
            return False
        if match := _COMMAND_LINE.fullmatch(text):
            invocation = self.current_invocation(line)
            if invocation.command_line is not None:
                invocation = self.new_invocation(line)
            invocation.command_line = match["parameters"].strip()
            invocation.options = _options(invocation.command_line)
            buffer = _buffer_from_option(invocation.options)
            if buffer is not None:
                invocation.settings["buffer"] = buffer
            return True
        if text.startswith("Invalid Argument") or text.startswith("USAGE:"):
            invocation = self.current_invocation(line)
            self.close_run(line - 1)
            if not invocation.failed:
                self.tool_errors.append({"line": line, "message": text})
            invocation.failed = True
            self.usage = True
            return True
        if text.rstrip(".") == "Exiting":
            if self.run is not None:
                _mark_truncated(self.run, f"MLC printed 'Exiting...' (line {line})")
                self.close_run(line)
            else:
                self.tool_errors.append({"line": line, "message": "MLC exited before measuring ('Exiting...')"})
                self.current_invocation(line).failed = True
            return True
        return False

    def _fresh_labelled(self) -> bool:
        """True while the open invocation only has its `==== Run N ====` label (the run follows)."""
        invocation = self.invocation
        return invocation is not None and invocation.label is not None and not invocation.started \
            and not invocation.sections

    def prose(self, line: int, text: str, invocation: _Invocation) -> bool:
        if match := _BUFFER.fullmatch(text):
            buffer = _buffer_from_option(invocation.options) or {}
            size = f"{match['size']}{match['unit']}"
            self.set_setting("buffer", {
                "printed": size,
                "bytes": buffer.get("bytes") or round(number(match["size"], self.source, line, "buffer size")
                                                      * _SIZE_UNITS[match["unit"][0]]),
                "per_thread": bool(match["per_thread"]),
                "from": buffer.get("from", "printed"),
            })
            return True
        if text.startswith("***"):
            note = text.lstrip("* ").strip()
            self.add_note(line, note)
            if "random access" in note:
                self.set_setting("access", "random")
            return True
        if text.startswith("Using all the threads from each core"):
            self.set_setting("threads_per_core", "all")
            return True
        if text.startswith("Using only one thread from each core"):
            self.set_setting("threads_per_core", "one")
            return True
        if text == "Using Read-only traffic type":
            self.set_setting("traffic", "read-only")
            self.set_setting("traffic_description", "100% reads")
            return True
        if match := _MB_DECLARATION.fullmatch(text):
            self.mb_bytes = self.integer(match["bytes"].replace(",", ""), line, "bytes of an MB")
            if self.mb_bytes != 1_000_000:
                self.add_note(line, f"MLC declares 1 MB/sec = {self.mb_bytes} B/s; bandwidths converted to 1e6 B/s")
            return True
        if any(pattern.fullmatch(text) for pattern in _IGNORED_PROSE):
            return True
        if (match := _IDLE.fullmatch(text)) and match["clock"].rstrip().endswith("clocks"):
            self.open_run("idle_latency", line)
            self.add_row(line, {
                "latency_ns": number(match["ns"], self.source, line, "latency (ns)"),
                "clocks": number(match["clocks"], self.source, line, "clocks"),
                "clock": match["clock"].rstrip().removesuffix("clocks").rstrip(),
            })
            self.close_run(line)
            return True
        if text.startswith("Measuring"):
            for pattern, mode in _SECTIONS:
                if match := pattern.match(text):
                    run = self.open_run(mode, line)
                    access = match.groupdict().get("access")
                    if access:
                        run["access"] = access.lower()
                    self.state = {
                        "loaded_latency": "ladder_wait",
                        "peak_injection_bandwidth": "ratios",
                        "max_bandwidth": "ratios",
                        "c2c_latency": "c2c",
                    }.get(mode, "matrix_title")
                    if mode in ("latency_matrix", "bandwidth_matrix"):
                        self.matrix = {"value_key": "latency_ns" if mode == "latency_matrix" else "bandwidth_mb_s",
                                       "row_key": "cpu_node", "column_key": "memory_node", "extra": {}}
                    return True
            raise self.fail(line, f"an MLC measurement this parser does not know: {text[:120]!r}")
        if text.startswith("Using "):
            self.add_note(line, text)  # other settings MLC describes (pages, AVX, ...)
            return True
        return False

    # ---- tables ------------------------------------------------------------------------------

    def table_line(self, line: int, text: str) -> bool:
        state = self.state
        if state in ("ladder_wait", "ladder_rows"):
            return self.ladder_line(line, text)
        if state == "ratios":
            return self.ratio_line(line, text)
        if state == "c2c":
            return self.c2c_line(line, text)
        if state in ("matrix_title", "matrix_columns", "matrix_rows"):
            return self.matrix_line(line, text)
        return False

    def ladder_line(self, line: int, text: str) -> bool:
        if any(header.fullmatch(text) for header in _LADDER_HEADERS):
            return True
        if _RULE.fullmatch(text):
            self.state = "ladder_rows"
            return True
        if self.state != "ladder_rows":
            return False
        if match := _LADDER_ROW.fullmatch(text):
            bandwidth = self.bandwidth(match["bandwidth"], line)
            self.add_row(line, {
                "delay_cycles": self.integer(match["delay"], line, "injected delay"),
                "latency_ns": number(match["latency"], self.source, line, "latency (ns)"),
                "bandwidth_mb_s": bandwidth,
            })
            return True
        if match := _LADDER_PARTIAL.fullmatch(text):
            delay = self.integer(match["delay"], line, "injected delay")
            _mark_truncated(self.run, f"the row for delay {delay} is incomplete (line {line})")
            self.run["end_line"] = line
            return True
        if text[0].isdigit():
            raise self.fail(line, f"cannot read this loaded-latency row (expected: delay, latency ns, MB/sec): {text!r}")
        return False

    def ratio_line(self, line: int, text: str) -> bool:
        """`ALL Reads        :      12345.6`: a label, a colon, a bandwidth (the label may hold colons: 3:1)."""
        label, colon, bandwidth = text.rpartition(":")
        label, bandwidth = label.rstrip(), bandwidth.strip()
        if not colon or not _RATIO_LABEL.fullmatch(label) or not _NUMBER.fullmatch(bandwidth) or label.startswith("Using"):
            return False
        label = " ".join(label.split())
        self.add_row(line, {
            "traffic": re.sub(r"[^a-z0-9:]+", "_", label.lower()).strip("_"),
            "label": label,
            "bandwidth_mb_s": self.bandwidth(bandwidth, line),
        })
        return True

    def c2c_line(self, line: int, text: str) -> bool:
        if match := _C2C_LOCAL.fullmatch(text):
            self.add_row(line, {
                "scope": f"{match['scope'].lower()}_socket",
                "path": match["path"],
                "transfer": match["transfer"],
                "latency_ns": number(match["ns"], self.source, line, "latency (ns)"),
            })
            return True
        if match := _C2C_REMOTE.fullmatch(text):
            self.state = "matrix_title"
            self.matrix = {
                "value_key": "latency_ns", "row_key": "writer_node", "column_key": "reader_node",
                "extra": {"scope": f"{match['scope'].lower()}_socket", "path": match["path"],
                          "transfer": match["transfer"], "homed_in": match["homed"].lower()},
                "resume": "c2c",
            }
            self.run["end_line"] = line
            return True
        if text.startswith(("Local Socket", "Remote Socket")):
            raise self.fail(line, f"cannot read this cache-to-cache line: {text[:120]!r}")
        return False

    def matrix_line(self, line: int, text: str) -> bool:
        if self.state == "matrix_title" and _MATRIX_TITLE.fullmatch(text):
            self.state = "matrix_columns"
            return True
        if self.state in ("matrix_title", "matrix_columns"):
            match = _MATRIX_COLUMNS.fullmatch(text)
            if match is None:
                return False
            self.matrix["columns"] = [self.integer(column, line, "matrix column") for column in match["ids"].split()]
            if match["kind"] == "Socket":
                self.run["notes"].append("matrix rows are sockets (MLC's single-node 'Memory node / Socket' header)")
            self.state = "matrix_rows"
            return True
        match = _MATRIX_ROW.fullmatch(text)
        if match is None:  # the next heading may follow the matrix without a blank line
            self.state = self.matrix.get("resume")
            return self.state is not None and self.table_line(line, text)
        cells = match["cells"].split()
        columns = self.matrix["columns"]
        if len(cells) != len(columns):
            raise self.fail(line, f"matrix row {match['id']} has {len(cells)} values for {len(columns)} columns: {text!r}")
        for column, cell in zip(columns, cells):
            if cell == "-":
                continue  # MLC does not measure this pair (a node with itself in the c2c matrices)
            value = number(cell, self.source, line, f"matrix cell ({match['id']}, {column})")
            if self.matrix["value_key"] == "bandwidth_mb_s":
                value = self.bandwidth(cell, line)
            self.add_row(line, {
                **self.matrix["extra"],
                self.matrix["row_key"]: self.integer(match["id"], line, "matrix row"),
                self.matrix["column_key"]: column,
                self.matrix["value_key"]: value,
            })
        return True

    def integer(self, text: str, line: int, what: str) -> int:
        """A whole number the pattern matched as digits, within 64 bits (parsers.number's check): thousands of
        digits were a float overflow or an int() error, not a parse error."""
        value = number(text, self.source, line, what)
        if not isinstance(value, int):
            raise self.fail(line, f"{what}: expected a whole number, found {text[:40]!r}")
        return value

    def bandwidth(self, text: str, line: int) -> int | float:
        value = number(text, self.source, line, "bandwidth (MB/sec)")
        return value if self.mb_bytes == 1_000_000 else scaled(value, self.mb_bytes / 1_000_000)

    def finish(self, last_line: int) -> dict:
        self.close_invocation(last_line)
        for run in self.runs:
            _clear_throughput_only_latencies(run)
        versions = list(dict.fromkeys(run["version"] for run in self.runs if run["version"]))
        versions += [i.version for i in self.invocations if i.version and i.version not in versions]
        return {
            "tool": "mlc",
            "source": self.source,
            "version": versions[0] if len(versions) == 1 else None,
            "versions": versions,
            "invocations": len(self.invocations),
            "tool_errors": self.tool_errors,
            "runs": self.runs,
        }


def _options(command_line: str) -> dict[str, str]:
    """'--loaded_latency -W6 -c0 -t 10' -> {'mode': 'loaded_latency', 'W': '6', 'c': '0', 't': '10'}. MLC's
    options are single letters; anything else on the line is not kept (each run copies the options)."""
    options: dict[str, str] = {}
    previous = None
    for token in command_line.split():
        if token.startswith("--"):
            options["mode"] = token[2:]
            previous = None
        elif token.startswith("-") and len(token) > 1 and token[1].isascii() and token[1].isalpha():
            previous = token[1]
            options[previous] = token[2:]
        elif previous is not None and options[previous] == "":
            options[previous] = token
            previous = None
    return options


def _mode_from_options(command_line: str | None) -> str | None:
    mode = _options(command_line or "").get("mode")
    return mode if mode in MODES else None


def _buffer_from_option(options: dict[str, str]) -> dict | None:
    """-b is in KiB unless it carries a k/m/g suffix (-b900k, -b11m)."""
    match = re.fullmatch(r"(\d{1,15})([kKmMgG]?)", options.get("b", ""))  # more digits are no buffer size
    if match is None:
        return None
    factor = _SIZE_UNITS[match[2].upper()] if match[2] else 1 << 10
    return {"printed": None, "bytes": int(match[1]) * factor, "per_thread": None, "from": "-b"}


def _mark_truncated(run: dict, reason: str) -> None:
    if not run["truncated"]:
        run["truncated"] = True
        run["truncation"] = reason


def _check_ladder(run: dict) -> None:
    """A default ladder (no -d, no -g) that stops early was cut short even without 'Exiting...'."""
    options = run["options"]
    delays = tuple(row["delay_cycles"] for row in run["rows"])
    if run["truncated"] or "d" in options or "g" in options or not delays:
        return
    if len(delays) < len(DEFAULT_DELAYS) and DEFAULT_DELAYS[: len(delays)] == delays:
        _mark_truncated(run, f"the default delay ladder stops at {delays[-1]} cycles; it runs to {DEFAULT_DELAYS[-1]}")


def _clear_throughput_only_latencies(run: dict) -> None:
    """With -T there is no latency thread: MLC prints 0.00, which is not a measured latency."""
    if run["mode"] != "loaded_latency":
        return
    zeros = [row for row in run["rows"] if row["latency_ns"] == 0]
    if run["throughput_only"] or (zeros and len(zeros) == len(run["rows"])):
        run["throughput_only"] = True
        for row in run["rows"]:
            row["latency_ns"] = None
        run["notes"].append("throughput threads only (-T): no latency was measured")
    elif zeros:
        for row in zeros:
            row["latency_ns"] = None
        run["notes"].append(f"latency printed as 0.00 on {len(zeros)} rows: not a measurement, left empty")


def parse(text: str, source: str = "<input>") -> dict:
    lines = split_lines(text)
    if not any(line.strip() for line in lines):
        raise ParseError(source, 1, "empty input: expected Intel MLC output")
    reader = _Reader(source)
    for line_number, raw in enumerate(lines, start=1):
        reader.feed(line_number, raw)
    result = reader.finish(len(lines))
    if not result["runs"] and not result["tool_errors"]:
        raise ParseError(source, 1, "no MLC output found (no banner, no measurement)")
    return result


_METRICS = {
    "latency_ns": ("latency", "ns"),
    "bandwidth_mb_s": ("bandwidth", "MB/s"),
    "clocks": ("latency_clocks", "clocks"),
}


def rows(parsed: dict) -> list[dict]:
    samples = []
    for index, run in enumerate(parsed["runs"]):
        buffer = run["buffer"] or {}
        common = {
            "mode": run["mode"], "run": index, "invocation": run["invocation"],
            "buffer_bytes": buffer.get("bytes"), "traffic": run["traffic"], "access": run["access"],
        }
        for row in run["rows"]:
            params = {**common, **{k: v for k, v in row.items() if k not in _METRICS and k != "line"}}
            for key, (metric, unit) in _METRICS.items():
                if row.get(key) is not None:
                    samples.append(sample(metric, row[key], unit, **params))
    return samples


def table(parsed: dict) -> list[str]:
    """The CLI's readable summary: one block per run."""
    out = [f"mlc {parsed['version'] or '/'.join(parsed['versions']) or '?'}: {len(parsed['runs'])} runs "
           f"from {parsed['invocations']} invocations"]
    out += [f"MLC error at line {error['line']}: {error['message']}" for error in parsed["tool_errors"]]
    for index, run in enumerate(parsed["runs"]):
        buffer = (run["buffer"] or {}).get("printed") or (run["buffer"] or {}).get("bytes")
        flags = [f"buffer {buffer}" if buffer else None, run["traffic"], run["access"] and f"{run['access']} access",
                 "TRUNCATED: " + run["truncation"] if run["truncated"] else None]
        out.append("")
        described = ", ".join(flag for flag in flags if flag)
        out.append(f"run {index} [{run['mode'] or 'unknown mode'}] lines {run['line']}-{run['end_line']}"
                   f"{' (' + run['command_line'] + ')' if run['command_line'] else ''}"
                   f"{': ' + described if described else ''}")
        keys = [key for key in dict.fromkeys(k for row in run["rows"] for k in row) if key not in ("line", "label")]
        if keys:
            out += text_table(keys, [[row.get(key) for key in keys] for row in run["rows"]])
    return out
