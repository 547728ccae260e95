"""Filters of the workloads role: one kernel process per workload, and the experiment record built from
what the runs, perf record and perf report returned."""

from __future__ import annotations

import re
import time

# perf report --stdio -q --sort dso,symbol: "    15.79%  libc.so.6   [.] __strcmp_avx2   -   -"
# The line comes from the host: every part of the pattern is followed by what it cannot take, and the
# symbol runs to the end, its trailing "-  -" columns taken off after (a lazy symbol before optional blanks
# and dashes retried the blanks at each character: quadratic in a line of blanks).
_REPORT_LINE = re.compile(r"\s*+(?P<percent>\d+(?:\.\d+)?)%\s+(?P<dso>\S+)\s+\[(?P<space>.)\]\s+(?P<symbol>.+)")
STDERR_TAIL_LINES = 5


def workload_points(workloads, binary, output, repeats, timeout_s):
    """[{label, argv, record_argv}] for fleet_workloads: each workload timed by `fleetscope-kernels
    workload`, its records appended to output (argv), and the same for perf record (record_argv). A
    workload's own repeats and timeout_s win over the role's."""
    points = []
    for workload in workloads:
        runs = int(workload.get("repeats") or repeats)
        timeout = int(workload.get("timeout_s") or timeout_s)
        chdir = workload.get("chdir") or None
        where = ["--timeout-s", str(timeout), *(["--chdir", str(chdir)] if chdir else [])]
        command = [str(argument) for argument in workload["command"]]
        points.append({
            "label": workload["name"],
            "argv": [str(binary), "workload", "--name", workload["name"], "--samples", str(runs), *where,
                     "--experiment", "workloads", "--output", str(output), "--", *command],
            # perf record's run: one more, its record thrown away; the kernel still discards the
            # command's stdout (which may be binary) and enforces the timeout.
            "record_argv": [str(binary), "workload", "--name", workload["name"], "--samples", "1", *where,
                            "--output", "/dev/null", "--", *command],
        })
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
    """The first `count` (percent, dso, symbol) rows of `perf report --stdio -q --sort dso,symbol`."""
    rows = []
    for line in (report or "").splitlines():
        match = _REPORT_LINE.fullmatch(line.rstrip())
        if match:
            rows.append((float(match["percent"]), match["dso"], _without_dash_columns(match["symbol"])))
    return sorted(rows, key=lambda row: -row[0])[:int(count)]


def _tier_note(perf):
    capability = perf.get("capability") or "none"
    reason = perf.get("reason") or "not recorded"
    if capability == "hardware":
        return f"counter tier: hardware ({reason}): workloads classified from IPC and miss rates"
    if capability == "software":
        return (f"counter tier: software ({reason}): workloads are 'unclassified: counters unavailable'; "
                "their wall time, CPU time, context switches, migrations and page faults are still measured")
    return (f"counter tier: none ({reason}): no perf stat; workloads are 'unclassified: counters unavailable', "
            "wall time and rusage only")


def workload_record(runs, records, reports, perf, perf_record, top_count, started, error=None, statuses=None):
    """The experiment record of the workloads: failed when any command failed (each one's exit status
    and stderr tail in `error`), the counter tier and each workload's top functions in `notes`, and
    every perf stat CSV in `raw` with the workload's name, status and exit status. `statuses`, one per
    run, is how each kernel process ended (filter kernel_status: None when it said exit 0 itself);
    without it, each run's rc decides."""
    failures, raw, notes = [], [], [_tier_note(perf or {})]
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
                               "failure": None if ok else _failure(run)}
            raw.append(entry)
    if perf_record and (perf or {}).get("capability") in ("hardware", "software"):
        for record in records:
            if record.get("skipped"):
                continue
            name = ((record.get("item") or {}).get("item") or {}).get("label", "?")
            if record.get("rc") != 0:
                notes.append(f"{name}: perf record failed (exit {record.get('rc')}): "
                             f"{_tail(record.get('stderr') or record.get('msg'), 2)}")
        for report in reports:
            name = (((report.get("item") or {}).get("item") or {}).get("item") or {}).get("label", "?")
            if report.get("rc") != 0:
                notes.append(f"{name}: perf report failed (exit {report.get('rc')}): {_tail(report.get('stderr'), 2)}")
                continue
            top = top_functions(report.get("stdout"), top_count)
            described = "; ".join(f"{percent:.1f}% {symbol} ({dso})" for percent, dso, symbol in top)
            event = "cycles" if perf.get("capability") == "hardware" else "cpu-clock"
            notes.append(f"{name}: top functions (perf record, {event}): {described or 'no samples'}")
    elif perf_record:
        notes.append("perf record not run: perf cannot count on this host")
    problems = failures + ([error] if error else [])
    return {"name": "workloads", "status": "failed" if problems else "ok", "file": "results/workloads.jsonl",
            "error": "\n".join(problems) or None, "notes": notes, "raw": raw,
            "wall_s": round(time.time() - float(started), 3)}


class FilterModule:
    def filters(self):
        return {"workload_points": workload_points, "workload_record": workload_record,
                "top_functions": top_functions}
