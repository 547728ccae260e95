"""Filters of the workloads role: one kernel process per workload, the perf record runs of each one that
ran (by time and by misses), and the experiment record built from what the runs, perf record and perf
report returned."""

from __future__ import annotations

import re
import time

# perf report --stdio -q --sort dso,symbol: "    15.79%  libc.so.6   [.] __strcmp_avx2   -   -", with a samples
# column after the percent with -n or -F overhead,sample,... ("    15.79%   123  libc.so.6 ...").
# The line comes from the host: every part of the pattern is followed by what it cannot take, and the
# symbol runs to the end, its trailing "-  -" columns taken off after (a lazy symbol before optional blanks
# and dashes retried the blanks at each character: quadratic in a line of blanks).
_REPORT_LINE = re.compile(r"\s*+(?P<percent>\d+(?:\.\d+)?)%\s++(?:\d++\s++(?=\S))?(?P<dso>\S+)\s+\[(?P<space>.)\]\s+"
                          r"(?P<symbol>.+)")
_SAMPLES_HEADER = re.compile(r"^#\s*Samples:\s+(?P<count>\S+)\s+of event\s+'(?P<event>[^']*)'", re.MULTILINE)
STDERR_TAIL_LINES = 5
TIME_EVENTS = {"hardware": "cycles", "software": "cpu-clock"}


def workload_points(workloads, binary, output, repeats, timeout_s, record_frequency=499):
    """[{label, argv, record_argv, record_frequency, reference}] for the role's workload list: each workload
    timed by `fleetscope-kernels workload`, its records appended to output (argv), and the same for perf
    record (record_argv). A workload's own repeats, timeout_s and record_frequency win over the role's."""
    points = []
    for workload in workloads:
        runs = int(workload.get("repeats") or repeats)
        timeout = int(workload.get("timeout_s") or timeout_s)
        chdir = workload.get("chdir") or None
        where = ["--timeout-s", str(timeout), *(["--chdir", str(chdir)] if chdir else [])]
        command = [str(argument) for argument in workload["command"]]
        points.append({
            "label": workload["name"],
            "reference": bool(workload.get("reference")),
            "record_frequency": int(workload.get("record_frequency") or record_frequency),
            "argv": [str(binary), "workload", "--name", workload["name"], "--samples", str(runs), *where,
                     "--experiment", "workloads", "--output", str(output), "--", *command],
            # perf record's run: one more, its record thrown away; the kernel still discards the
            # command's stdout (which may be binary) and enforces the timeout.
            "record_argv": [str(binary), "workload", "--name", workload["name"], "--samples", "1", *where,
                            "--output", "/dev/null", "--", *command],
        })
    return points


def miss_event(probe, perf, candidates, enabled=True):
    """The event perf record samples misses by: {"event": the first of `candidates` that the probe's
    `perf stat -x,` counted, or None, "note": why there is none}. Without a PMU there is none: the reason the
    facts' probe gave is the note."""
    capability = (perf or {}).get("capability") or "none"
    if not enabled:
        return {"event": None, "note": "not run: workloads_perf_record is false"}
    if capability != "hardware":
        reason = (perf or {}).get("reason") or "not recorded"
        return {"event": None, "note": f"not supported: counter tier {capability} ({reason}); no miss event can be "
                                       "sampled here"}
    states = {}
    for line in ((probe or {}).get("stderr") or "").splitlines():
        fields = line.split(",")
        if len(fields) >= 3:
            name = fields[2].split(":")[0].strip()
            states[name] = "counted" if fields[0].strip().replace(".", "", 1).isdigit() else fields[0].strip("<> ")
    for event in candidates:
        if states.get(event) == "counted":
            return {"event": event, "note": None}
    said = ", ".join(f"{event} {states.get(event, 'not reported')}" for event in candidates)
    return {"event": None, "note": f"not supported: the PMU samples none of the miss events ({said})"}


def record_points(runs, perf, miss, scratch):
    """The perf record runs of each workload that ran: by time (cycles where the PMU counts, else cpu-clock) and,
    where `miss` names an event, by misses. Each: {label, kind (time | misses), event, argv, data, item}."""
    capability = (perf or {}).get("capability") or "none"
    if capability not in TIME_EVENTS:
        return []
    points = []
    for run in runs:
        if run.get("rc") != 0 or run.get("skipped"):
            continue
        workload = run.get("item") or {}
        for kind, event in (("time", TIME_EVENTS[capability]), ("misses", (miss or {}).get("event"))):
            if not event:
                continue
            data = f"{scratch}/{workload['label']}.{kind}.perf.data"
            points.append({"label": workload["label"], "kind": kind, "event": event, "data": data,
                           "reference": workload.get("reference", False),
                           "argv": ["perf", "record", "-q", "-e", event, "-F", str(workload.get("record_frequency", 499)),
                                    "-o", data, "--", *workload["record_argv"]]})
    return points


def _tail(text, lines=STDERR_TAIL_LINES):
    return " | ".join((text or "").strip().splitlines()[-lines:])


def _failure(run):
    """What went wrong, in one line: the kernel's own last word on the run (which names the command's
    exit status, signal or timeout), else the exit status of what Ansible ran."""
    lines = (run.get("stderr") or "").strip().splitlines()
    kernel_lines = [line for line in lines if line.startswith("fleetscope-kernels workload: ")]
    if kernel_lines:
        return kernel_lines[-1].removeprefix("fleetscope-kernels workload: ")
    return f"exit status {run.get('rc')}: {_tail(run.get('stderr') or run.get('msg'), 2)}"


def _without_dash_columns(symbol):
    """'__strcmp_avx2    -      -' -> '__strcmp_avx2': perf's empty period columns after a symbol."""
    if symbol.endswith("-"):
        head = symbol[:-1].rstrip()
        if head.endswith("-") and head[:-1] != head[:-1].rstrip() and head[:-1].strip():
            return head[:-1].rstrip()
    return symbol


def top_functions(report, count):
    """The first `count` (percent, dso, symbol) rows of `perf report --stdio --sort dso,symbol` (its first
    event's profile)."""
    rows = []
    for line in (report or "").splitlines():
        if rows and line.startswith("# Samples:"):
            break
        match = _REPORT_LINE.fullmatch(line.rstrip())
        if match:
            rows.append((float(match["percent"]), match["dso"], _without_dash_columns(match["symbol"])))
    return sorted(rows, key=lambda row: -row[0])[:int(count)]


def report_problem(report):
    """None where every line of a perf report is a header, a blank or a function row the warehouse's parser
    reads; else the first line that is not (the report is then not named in the manifest, so an odd output
    cannot refuse the bundle)."""
    for number, line in enumerate((report or "").splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#") and not _REPORT_LINE.match(line):
            return f"line {number} is not a perf report row: {line.strip()[:80]!r}"
    return None


def report_path(point):
    return f"raw/workloads/{point['label']}.{point['kind']}.perf-report.txt"


def _tier_note(perf):
    capability = perf.get("capability") or "none"
    reason = perf.get("reason") or "not recorded"
    if capability == "hardware":
        return f"counter tier: hardware ({reason}): workloads classified from their counters and profiles"
    if capability == "software":
        return (f"counter tier: software ({reason}): the cases are undecided (no instruction or miss counts); "
                "wall time, CPU time, context switches, migrations, page faults and the cpu-clock time profile "
                "are still measured")
    return (f"counter tier: none ({reason}): no perf stat and no perf record; the cases are undecided, "
            "wall time and rusage only")


def workload_record(runs, records, reports, perf, perf_record, top_count, started, error=None, statuses=None,
                    miss=None):
    """The experiment record of the workloads: failed when any command failed (each one's exit status
    and stderr tail in `error`), the counter tier, the miss event and each profile's top functions in
    `notes`, every perf stat CSV and every perf report in `raw` with the workload's name, status and exit
    status. `statuses`, one per run, is how each kernel process ended (filter kernel_status: None when it
    said exit 0 itself); without it, each run's rc decides. `records` are perf record's results over
    record_points, `reports` perf report's over the records that succeeded."""
    failures, raw, notes = [], [], [_tier_note(perf or {})]
    miss_note = (miss or {}).get("note")
    for index, run in enumerate(runs):
        point = run.get("item") or {}
        name = point.get("label", "?")
        rc = run.get("rc")
        status = statuses[index] if statuses is not None else (None if rc == 0 else f"exit {rc if rc is not None else '?'}")
        ok = status is None
        if not ok:
            failures.append(f"{name}: {status}: {_tail(run.get('stderr') or run.get('msg'))}")
        if point.get("raw"):
            entry = dict(point["raw"])
            entry["params"] = {**entry.get("params", {}), "workload": name, "status": "ok" if ok else "failed",
                               "failure": None if ok else _failure(run), "reference": bool(point.get("reference"))}
            raw.append(entry)
    if perf_record and (perf or {}).get("capability") in TIME_EVENTS:
        if (miss or {}).get("event"):
            notes.append(f"miss profile: perf record -e {miss['event']} (the first miss event this PMU counts)")
        elif miss_note:
            notes.append(f"miss profile: {miss_note}")
        for record in records:
            point = record.get("item") or {}
            if record.get("rc") != 0:
                notes.append(f"{point.get('label', '?')}: perf record -e {point.get('event')} failed "
                             f"(exit {record.get('rc')}): {_tail(record.get('stderr') or record.get('msg'), 2)}")
        for report in reports:
            point = (report.get("item") or {}).get("item") or {}
            name, event = point.get("label", "?"), point.get("event")
            if report.get("rc") != 0:
                notes.append(f"{name}: perf report of {event} failed (exit {report.get('rc')}): "
                             f"{_tail(report.get('stderr'), 2)}")
                continue
            top = top_functions(report.get("stdout"), top_count)
            if not top:
                notes.append(f"{name}: perf record -e {event} took no samples")
                continue
            problem = report_problem(report.get("stdout"))
            if problem:
                notes.append(f"{name}: perf report of {event} kept in the bundle but not read: {problem}")
                continue
            described = "; ".join(f"{percent:.1f}% {symbol} ({dso})" for percent, dso, symbol in top)
            notes.append(f"{name}: top functions (perf record, {event}): {described}")
            params = {"workload": name, "profile": point["kind"], "event": event,
                      "reference": bool(point.get("reference"))}
            if point["kind"] == "time" and not (miss or {}).get("event") and miss_note:
                params["miss_note"] = miss_note
            raw.append({"path": report_path(point), "tool": "perf_report", "params": params})
    elif perf_record:
        notes.append("perf record not run: perf cannot count on this host")
    problems = failures + ([error] if error else [])
    return {"name": "workloads", "status": "failed" if problems else "ok", "file": "results/workloads.jsonl",
            "error": "\n".join(problems) or None, "notes": notes, "raw": raw,
            "wall_s": round(time.time() - float(started), 3)}


class FilterModule:
    def filters(self):
        return {"workload_points": workload_points, "workload_record": workload_record,
                "top_functions": top_functions, "workload_miss_event": miss_event,
                "workload_record_points": record_points, "workload_report_path": report_path}
