"""`perf stat -x,` (CSV) output.

Each row is value, unit, event, run time (ns), % of the run time the counter ran, metric value,
metric unit (`perf stat -x,`), optionally preceded by the interval time stamp (-I) and an
aggregation column (-A: CPU3; --per-socket/--per-core: S0 or S0-D0-C1 and a CPU count), and with
a variance column after the event when perf ran with -r. Older perf versions print fewer columns.
`<not supported>` and `<not counted>` are data: the event gets that `state` and no value (never a
zero). Hybrid CPUs print one row per PMU (`cpu_core/cycles/`, `cpu_atom/cycles/`): `pmu` says
which. A counter that ran less than 100% of the time was multiplexed and its value is perf's scaled
estimate (`multiplexed: true`). The `# started on` header and blank lines are accepted; any other
line raises ParseError naming the file and line.

perf stat's human-readable output (`Performance counter stats for ...`, thousands separators, `# 2.33
insn per cycle` comments, `(41.60%)` multiplexing) is read by parse_human into the same events, with
"format": "human", the command perf named, and its elapsed, user and system seconds.

parse() returns
    {"tool": "perf", "source": str, "started_on": str | None, "comments": [str], "hybrid": bool,
     "events": [event]}
    event = {"line": int, "event": "cpu_core/cache-misses/" (as printed), "name": "cache-misses",
             "pmu": "cpu_core" | "cpu_atom" | other PMU | None, "modifiers": "u" | "" ,
             "state": "counted" | "not supported" | "not counted", "value": int | float | None,
             "unit": "" | "msec" | ..., "run_time_ns": int | None, "running_percent": float | None,
             "multiplexed": bool, "variance_percent": float | None, "metric_value": float | None,
             "metric_unit": str | None, "interval_s": float | None, "aggregate": "CPU3" | "S0" | None,
             "aggregate_cpus": int | None}

rows() gives one sample per counted event: metric = the event name, value = the count, unit
"count" (or perf's unit: "ms" for msec, ...), params {"pmu", "modifiers", "running_percent",
"interval_s", "aggregate"}; plus "<event>:<metric unit>" samples for perf's derived metrics
(e.g. "instructions:insn per cycle"). Uncounted events are not samples: find them in parse().
"""

from __future__ import annotations

import re

from fleetscope.ingest.parsers import ParseError, is_number, number, sample, split_lines, text_table

STATES = {"<not supported>": "not supported", "<not counted>": "not counted"}
HYBRID_PMUS = ("cpu_core", "cpu_atom")
UNITS = {"": "count", "msec": "ms", "ns": "ns", "Joules": "J"}
_AGGREGATE = re.compile(r"CPU\d+|S\d+(?:-D\d+)?(?:-C\d+|-L\d+-ID\d+)?|N\d+")
_PMU_EVENT = re.compile(r"(?P<pmu>[A-Za-z_][\w.-]*)/(?P<name>[^/]*)/(?P<modifiers>[A-Za-z]*)")
_PLAIN_EVENT = re.compile(r"(?P<name>[^:]+?)(?::(?P<modifiers>[A-Za-z]+))?")


def parse(text: str, source: str = "<input>", separator: str = ",") -> dict:
    lines = split_lines(text)
    if any(line.lstrip().startswith("Performance counter stats for") for line in lines):
        return parse_human(lines, source)
    started_on = None
    comments: list[str] = []
    events = []
    for line_number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            comment = stripped.lstrip("#").strip()
            if comment.startswith("started on"):
                started_on = comment.removeprefix("started on").strip()
            else:
                comments.append(comment)
            continue
        events.append(_event(raw, separator, source, line_number))
    if not events:
        line = len(lines) or 1
        raise ParseError(source, line, "no perf stat rows: expected the output of `perf stat -x,`")
    return {"tool": "perf", "source": source, "started_on": started_on, "comments": comments,
            "hybrid": any(event["pmu"] in HYBRID_PMUS for event in events), "events": events}


def _is_value(field: str) -> bool:
    return field in STATES or is_number(field)


def _event(raw: str, separator: str, source: str, line: int) -> dict:
    fields = [field.strip() for field in raw.split(separator)]
    if "Performance counter stats for" in raw:
        raise ParseError(source, line, f"this is perf stat's human-readable output: run `perf stat -x{separator}`")
    if len(fields) < 3:
        raise ParseError(source, line, f"expected a `perf stat -x{separator}` row (value{separator}unit{separator}event"
                                       f"{separator}...), found {raw.strip()[:120]!r}")
    result = {"line": line, "interval_s": None, "aggregate": None, "aggregate_cpus": None}
    # -I: a time stamp comes first; the unit column after a value is never numeric, so two
    # value-like leading fields mean the first is the time stamp.
    if is_number(fields[0]) and _is_value(fields[1]):
        result["interval_s"] = float(fields[0])
        fields = fields[1:]
    if _AGGREGATE.fullmatch(fields[0]):
        result["aggregate"] = fields[0]
        fields = fields[1:]
        # --per-socket/--per-core/--per-node add the number of CPUs aggregated: S0,8,<value>,...
        if not result["aggregate"].startswith("CPU") and len(fields) > 3 and fields[0].isdigit() \
                and _is_value(fields[1]):
            result["aggregate_cpus"] = int(fields[0])
            fields = fields[1:]
    if len(fields) < 3:
        raise ParseError(source, line, f"too few columns for a perf stat row: {raw.strip()[:120]!r}")
    value_text, unit = fields[0], fields[1]
    event, rest = _join_event(fields[2:], separator)
    if not event:
        raise ParseError(source, line, f"the event name (column 3) is empty: {raw.strip()[:120]!r}")
    if value_text in STATES:
        state, value = STATES[value_text], None
    elif is_number(value_text):
        state, value = "counted", number(value_text, source, line, f"value of {event}")
    else:
        raise ParseError(source, line, f"value of {event}: expected a number, <not supported> or <not counted>, "
                                       f"found {value_text!r}")
    variance = None
    if rest and rest[0].endswith("%"):  # perf stat -r N prints the variance after the event
        variance = number(rest[0].removesuffix("%"), source, line, f"variance of {event}")
        rest = rest[1:]
    run_time = _optional_number(rest, 0, source, line, f"run time of {event}")
    running = _optional_number(rest, 1, source, line, f"% running of {event}")
    metric_value = _optional_number(rest, 2, source, line, f"metric value of {event}")
    metric_unit = rest[3] if len(rest) > 3 and rest[3] else None
    if len(rest) > 4 and any(rest[4:]):
        raise ParseError(source, line, f"unexpected extra columns after {event}: {separator.join(rest[4:])!r}")
    result.update(_event_name(event))
    result.update({
        "state": state, "value": value, "unit": unit,
        "run_time_ns": run_time, "running_percent": None if running is None else float(running),
        "multiplexed": state == "counted" and running is not None and running < 100,
        "variance_percent": variance, "metric_value": metric_value, "metric_unit": metric_unit,
    })
    return result


def _join_event(fields: list[str], separator: str) -> tuple[str, list[str]]:
    """A PMU event spelled with its terms (cpu/event=0x3c,umask=0x0/) contains the separator itself."""
    parts, slashes = [fields[0]], fields[0].count("/")
    index = 1
    while slashes % 2 == 1 and index < len(fields):  # counted per field: the joined text once per field was quadratic
        parts.append(fields[index])
        slashes += fields[index].count("/")
        index += 1
    return separator.join(parts), fields[index:]


def _optional_number(fields: list[str], index: int, source: str, line: int, what: str) -> int | float | None:
    if index >= len(fields) or not fields[index]:
        return None
    return number(fields[index].removesuffix("%"), source, line, what)


def _event_name(event: str) -> dict:
    if match := _PMU_EVENT.fullmatch(event):
        return {"event": event, "name": match["name"], "pmu": match["pmu"], "modifiers": match["modifiers"]}
    match = _PLAIN_EVENT.fullmatch(event)
    if match is None:  # a colon not followed by modifiers: a tracepoint (sched:sched_switch), named whole
        return {"event": event, "name": event, "pmu": None, "modifiers": ""}
    return {"event": event, "name": match["name"], "pmu": None, "modifiers": match["modifiers"] or ""}


def rows(parsed: dict) -> list[dict]:
    samples = []
    for event in parsed["events"]:
        if event["state"] != "counted":
            continue
        params = {"pmu": event["pmu"], "modifiers": event["modifiers"] or None,
                  "running_percent": event["running_percent"], "interval_s": event["interval_s"],
                  "aggregate": event["aggregate"]}
        samples.append(sample(event["name"], event["value"], UNITS.get(event["unit"], event["unit"]), **params))
        if event["metric_value"] is not None:
            samples.append(sample(f"{event['name']}:{event['metric_unit']}", event["metric_value"],
                                  event["metric_unit"] or "", **params))
    return samples


def table(parsed: dict) -> list[str]:
    counted = sum(event["state"] == "counted" for event in parsed["events"])
    out = [f"perf stat: {len(parsed['events'])} events ({counted} counted)"
           + (f", started on {parsed['started_on']}" if parsed["started_on"] else "")
           + (", hybrid PMUs" if parsed["hybrid"] else "")]
    body = [[event["line"], event["pmu"], event["name"] + (f":{event['modifiers']}" if event["modifiers"] else ""),
             event["value"] if event["state"] == "counted" else f"<{event['state']}>", event["unit"] or None,
             event["running_percent"], event["metric_value"], event["metric_unit"]] for event in parsed["events"]]
    return out + text_table(["line", "pmu", "event", "value", "unit", "% running", "metric", "metric unit"], body)


# ---- perf stat's human-readable output ------------------------------------------------------------

_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# perf stat -r adds the spread: "0.10077 +- 0.00872 seconds time elapsed  ( +-  8.65% )"
_SECONDS = re.compile(r"(?P<value>\d+(?:\.\d+)?)(?: \+- [\d.]+)? seconds (?P<what>time elapsed|user|sys)"
                      r"(?:\s+\( \+-\s+[\d.]+% \))?")
_HUMAN_UNITS = frozenset({"msec", "ns", "Joules", "MiB", "Watts"})
# perf's advice when counters could not be scheduled: its words, not counts
_HUMAN_ADVICE = ("Some events weren't counted", "echo 0 > /proc/sys/kernel/nmi_watchdog",
                 "echo 1 > /proc/sys/kernel/nmi_watchdog", "perf stat ")


def parse_human(lines: list[str], source: str) -> dict:
    """perf stat without -x: the same events as parse(), from the table perf prints for people."""
    events, comments = [], []
    command = elapsed = user = system = None
    for line_number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if not stripped:
            continue
        if stripped.startswith("Performance counter stats for"):
            quoted = stripped.partition("'")[2].rpartition("'")[0]
            command = quoted or stripped.removeprefix("Performance counter stats for").strip(" :")
            continue
        if stripped.startswith("#") or stripped.startswith(_HUMAN_ADVICE):
            comments.append(stripped.lstrip("#").strip())
            continue
        if match := _SECONDS.fullmatch(stripped):
            value = float(match["value"])
            if match["what"] == "time elapsed":
                elapsed = value
            elif match["what"] == "user":
                user = value
            else:
                system = value
            continue
        events.append(_human_event(stripped, source, line_number))
    if not events:
        raise ParseError(source, len(lines) or 1, "no counter rows under 'Performance counter stats for'")
    return {"tool": "perf", "source": source, "format": "human", "command": command, "started_on": None,
            "comments": comments, "hybrid": any(event["pmu"] in HYBRID_PMUS for event in events), "events": events,
            "elapsed_s": elapsed, "user_s": user, "sys_s": system}


def _human_event(stripped: str, source: str, line: int) -> dict:
    """One row: VALUE [UNIT] EVENT [# METRIC] [( +- VARIANCE% )] [(RUNNING%)]."""
    state = next((STATES[text] for text in STATES if stripped.startswith(text)), None)
    if state is not None:
        value_text, rest = None, stripped.split(">", 1)[1].strip()
    else:
        value_text, _space, rest = stripped.partition(" ")
    running = variance = None
    for _group in range(2):  # the trailing groups, last first: (41.60%) and ( +-  0.12% )
        rest = rest.rstrip()
        if not rest.endswith(")") or "(" not in rest:
            break
        head, _paren, group = rest.rpartition("(")
        inside = group[:-1].strip()
        if inside.startswith("+-"):
            variance = number(inside[2:].strip().removesuffix("%"), source, line, "variance")
        elif inside.endswith("%") and running is None:
            running = float(number(inside.removesuffix("%"), source, line, "% running"))
        else:
            break
        rest = head
    counter, _hash, metric = rest.partition("#")
    words = counter.split()
    unit = ""
    if len(words) == 2 and words[0] in _HUMAN_UNITS:
        unit, words = words[0], words[1:]
    if len(words) != 1:
        raise ParseError(source, line, f"expected a perf stat row (value, event, '# metric'), found {stripped[:120]!r}")
    event = words[0]
    if state is None:
        plain = value_text.replace(",", "") if _GROUPED.fullmatch(value_text) else value_text
        if not is_number(plain):
            raise ParseError(source, line, f"value of {event}: expected a number, <not supported> or <not counted>, "
                                           f"found {value_text!r}")
        state, value = "counted", number(plain, source, line, f"value of {event}")
    else:
        value = None
    metric_value = metric_unit = None
    if metric.strip():
        metric_text, _space, metric_words = metric.strip().partition(" ")
        if is_number(metric_text.removesuffix("%")):
            metric_value = number(metric_text.removesuffix("%"), source, line, f"metric of {event}")
            metric_unit = metric_words.strip() or None
    result = {"line": line, "interval_s": None, "aggregate": None, "aggregate_cpus": None}
    result.update(_event_name(event))
    result.update({
        "state": state, "value": value, "unit": unit, "run_time_ns": None, "running_percent": running,
        "multiplexed": state == "counted" and running is not None and running < 100,
        "variance_percent": variance, "metric_value": metric_value, "metric_unit": metric_unit,
    })
    return result
