"""`fleetscope check`: has any host changed since its baseline? The gate a nightly run ends in.

Each host's latest run is compared with a baseline run of it (its previous run, the run of a named run id,
its latest run on or before a date) or with one host's latest run (a golden machine or a reference host),
figure by figure: the figures of the host pages' summaries that the fleet page and `compare` put side by side
(fleetscope.report.fleet), read by the same code. A figure has MOVED when its change from the baseline is at
least its threshold and, for a cache level's latency, the Mann-Whitney test on the raw samples of the level's
plateau says it is no noise (p < fleet.SIGNIFICANT_P): `compare`'s rule, with a threshold the user can set per
figure. Figures with no samples behind them (bandwidth, TLB entries, MLP, storage p99, sizes) are gated on the
threshold alone, and say so. A figure the baseline measured and the latest run did not is LOST, which gates too
(an experiment that stopped running is a change a lab wants to hear of).

A threshold is relative ('10%': the change over the baseline's value) or absolute ('+2': in the figure's own
unit: ns, GB/s, bytes, a count, a fraction), or 'off'. DEFAULT_THRESHOLDS gives each figure one by its kind;
`--threshold PATTERN=VALUE` (fnmatch on the metric name, the last match wins) overrides it.

The result is written as text for people, JSON (keys pinned by a test and documented in README.md) and JUnit
XML (one test suite per host, one test case per figure) for AWX, Jenkins or GitLab.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from xml.etree import ElementTree
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

import duckdb

from fleetscope.errors import UserError
from fleetscope.report import fleet
from fleetscope.report.sections import Column

RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")
EXIT_CHANGED = 4   # the exit status when a figure of a checked host moved or was lost


@dataclass(frozen=True)
class Threshold:
    """How far a figure may move: `relative` (a fraction of the baseline's value) or `absolute` (in the figure's
    unit), or neither (off: the figure is shown, never gated)."""
    relative: float | None = None
    absolute: float | None = None

    @property
    def off(self) -> bool:
        return self.relative is None and self.absolute is None

    def text(self, column: Column) -> str:
        if self.relative is not None:
            return _percent(self.relative)
        if self.absolute is not None and column.kind == "percent":  # a share: its threshold is in points
            return f"±{100 * self.absolute:g} points"
        if self.absolute is not None:
            return f"±{fleet.format_value(column, self.absolute)}"
        return "off"


def _percent(fraction: float) -> str:
    text = f"{100 * fraction:.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


# Defaults by figure, first match wins: a level's latency moves with compare's 5% and its test; a level's size
# is inferred from a sweep with 2 to 4 points per octave, so only a move of half its size or more is a change; a
# bandwidth, TLB reach or MLP by 10%; a storage p99 by 25% (a disk's tail is noisy and shared); one flag more or
# less; THP grants by ten percentage points.
DEFAULT_THRESHOLDS: tuple[tuple[str, Threshold], ...] = (
    ("l*_latency", Threshold(relative=fleet.SIGNIFICANT_CHANGE)),
    ("dram_latency", Threshold(relative=fleet.SIGNIFICANT_CHANGE)),
    ("*_size", Threshold(relative=0.5)),
    ("storage_*", Threshold(relative=0.25)),
    (fleet.FLAGGED.key, Threshold(absolute=1)),
    (fleet.THP_GRANTED.key, Threshold(absolute=0.10)),
    ("*", Threshold(relative=0.10)),
)


def parse_threshold(text: str) -> tuple[str, Threshold]:
    """'dram_latency=8%', 'l*_size=off', 'storage_p99_read_ns=+50000' -> (pattern, Threshold)."""
    pattern, equals, value = text.partition("=")
    pattern, value = pattern.strip(), value.strip().lower()
    if not equals or not pattern or not value:
        raise UserError(f"--threshold {text!r}: expected FIGURE=VALUE, e.g. dram_latency=8%, 'l*_size=off', "
                        "flagged=+2 (figure names as in --format json)")
    if value == "off":
        return pattern, Threshold()
    try:
        if value.endswith("%"):
            number = float(value[:-1])
            threshold = Threshold(relative=number / 100)
        else:
            number = float(value.lstrip("+"))
            threshold = Threshold(absolute=number)
    except ValueError:
        number = -1.0
    if not 0 <= number < math.inf:  # NaN fails both comparisons
        raise UserError(f"--threshold {text!r}: the value must be a percentage (8%), an amount in the figure's "
                        "unit (+2) or off")
    return pattern, threshold


def threshold_for(metric: str, overrides: list[tuple[str, Threshold]]) -> Threshold:
    """The user's last matching --threshold, else the first matching default."""
    for pattern, threshold in reversed(overrides):
        if fnmatch.fnmatchcase(metric, pattern):
            return threshold
    return next(threshold for pattern, threshold in DEFAULT_THRESHOLDS if fnmatch.fnmatchcase(metric, pattern))


# ---- the baseline --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Baseline:
    """What each host is held against: previous | run (RUN_ID) | date (latest run started on or before) | host."""
    kind: str
    text: str
    run_id: str | None = None
    until: datetime | None = None
    host: str | None = None

    def describe(self) -> str:
        return {"previous": "each host's previous run", "run": f"each host's run {self.run_id}",
                "date": f"each host's latest run started by {self.until:%Y-%m-%d %H:%M:%S} UTC" if self.until else "",
                "host": f"the latest run of {self.host}"}[self.kind]


def parse_baseline(text: str) -> Baseline:
    """previous | RUN_ID | YYYY-MM-DD (through the end of that day, UTC) | an ISO 8601 time | host:NAME."""
    text = text.strip()
    if text == "previous":
        return Baseline("previous", text)
    if RUN_ID.fullmatch(text):
        return Baseline("run", text, run_id=text)
    if text.startswith("host:") and text[5:]:
        return Baseline("host", text, host=text[5:])
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            until = datetime.combine(date.fromisoformat(text) + timedelta(days=1), time(), UTC) - timedelta(microseconds=1)
        else:
            until = datetime.fromisoformat(text.replace("Z", "+00:00"))
            until = until.replace(tzinfo=UTC) if until.tzinfo is None else until.astimezone(UTC)
    except ValueError:
        raise UserError(f"--baseline {text!r}: expected previous, a run id (20261122T034500Z-a1b2c3), a date "
                        "(2026-11-22, its end; or an ISO 8601 time) or host:NAME") from None
    return Baseline("date", text, until=until)


def as_utc(value: object) -> datetime | None:
    """A warehouse timestamp as an aware UTC datetime (DuckDB gives naive UTC or aware ones)."""
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# ---- one host ------------------------------------------------------------------------------------------

@dataclass
class HostCheck:
    host: str
    latest: fleet.Run
    baseline: fleet.Run | None
    state: str                    # changed | held | no baseline
    note: str | None = None       # why there is no baseline
    figures: list[dict] = field(default_factory=list)

    @property
    def moved(self) -> list[dict]:
        return [figure for figure in self.figures if figure["status"] in ("moved", "lost")]


def _direction(column: Column, relative: float | None, difference: float | None) -> str | None:
    change = relative if relative is not None else difference
    if not change:
        return None
    higher_is_worse = column.kind == "ns" or column.key == fleet.FLAGGED.key
    return "worse" if (change > 0) == higher_is_worse else "better"


def judge(row: dict, delta: dict, threshold: Threshold, worse_only: bool) -> dict:
    """One figure of one host: a row of fleet.deltas (baseline first) and its delta, judged against `threshold`."""
    column: Column = row["column"]
    before, after = row["values"][0], row["values"][1]
    difference = after - before if isinstance(before, (int, float)) and isinstance(after, (int, float)) else None
    figure = {"column": column, "metric": column.key, "label": column.header, "unit": fleet.unit_of(column),
              "level": row["level"], "baseline": before, "latest": after, "relative": delta["relative"], "difference": difference,
              "p_value": delta["p_value"], "samples": delta["samples"], "threshold": threshold.text(column),
              "direction": _direction(column, delta["relative"], difference), "status": "held", "note": delta["note"]}
    if before is None and after is None:
        figure["status"], figure["note"] = "not measured", "measured in neither run"
    elif after is None:
        figure["status"], figure["note"] = "lost", "measured in the baseline, not in the latest run"
    elif before is None:
        figure["status"], figure["note"] = "new", "not measured in the baseline"
    if threshold.off and figure["status"] in ("held", "lost"):
        figure["status"] = "held" if figure["status"] == "held" else "not gated"
        figure["note"] = figure["note"] or "threshold off"
        return figure
    if figure["status"] != "held" or difference is None:
        return figure
    if threshold.relative is not None:
        beyond = delta["relative"] is not None and abs(delta["relative"]) >= threshold.relative
        if delta["relative"] is None:  # a zero baseline: only an absolute threshold can say how far it went
            figure["note"] = "the baseline is zero: no relative change"
    else:
        beyond = abs(difference) >= threshold.absolute
    tested = delta["p_value"] is not None
    significant = not tested or delta["p_value"] < fleet.SIGNIFICANT_P
    if beyond and significant and not (worse_only and figure["direction"] == "better"):
        figure["status"] = "moved"
    if not tested and figure["note"] is None and row["level"]:
        figure["note"] = "no raw samples on both sides: threshold only"
    if not tested and figure["note"] == "a summary figure: no samples to test":
        figure["note"] = "a summary figure: threshold only, no samples to test"
    return figure


def check_host(latest: fleet.Run, baseline: fleet.Run, values: dict, samples: dict, columns: list[Column],
               overrides: list[tuple[str, Threshold]], worse_only: bool) -> list[dict]:
    """Every figure of `latest` against `baseline`, judged (judge)."""
    operands = [fleet.Operand(f"{baseline.host}@{baseline.run_id}", "run", (baseline,)),
                fleet.Operand(f"{latest.host}@{latest.run_id}", "run", (latest,))]
    # threshold 0 and alpha 1: fleet.deltas computes the change and the test; judge applies the figure's threshold
    rows = fleet.deltas(operands, values, samples, columns, threshold=0.0, alpha=1.0)
    return [judge(row, row["deltas"][0], threshold_for(row["column"].key, overrides), worse_only) for row in rows]


def gated_columns(values: list[dict]) -> list[Column]:
    """The figures a check looks at: the fleet's measured columns and the flags count."""
    return [*fleet.measured_columns(values), fleet.FLAGGED]


# ---- the fleet -----------------------------------------------------------------------------------------

@dataclass
class CheckResult:
    baseline: Baseline
    hosts: list[HostCheck]
    thresholds: list[tuple[str, Threshold]]
    worse_only: bool
    checked_at: datetime

    @property
    def changed(self) -> list[HostCheck]:
        return [host for host in self.hosts if host.state == "changed"]

    @property
    def exit_status(self) -> int:
        return EXIT_CHANGED if self.changed else 0


def _pick_baseline(baseline: Baseline, latest: fleet.Run, runs_of_host: list[fleet.Run],
                   golden: fleet.Run | None) -> tuple[fleet.Run | None, str | None]:
    if baseline.kind == "host":
        if latest.host == golden.host:
            return None, "it is the baseline host"
        return golden, None
    if baseline.kind == "previous":
        earlier = [run for run in runs_of_host if run.recency == 2]
        return (earlier[0], None) if earlier else (None, "one run only: nothing to hold it against yet")
    if baseline.kind == "run":
        found = [run for run in runs_of_host if run.run_id == baseline.run_id]
        if not found:
            return None, f"no run {baseline.run_id}"
        if found[0].recency == 1:
            return None, f"run {baseline.run_id} is its latest: no newer run to check"
        return found[0], None
    by_then = [run for run in runs_of_host if (as_utc(run.started_at) or datetime.max.replace(tzinfo=UTC))
               <= baseline.until]
    if not by_then:
        return None, f"no run started by {baseline.until:%Y-%m-%d %H:%M} UTC"
    chosen = min(by_then, key=lambda run: run.recency)
    if chosen.recency == 1:
        return None, f"no run since {baseline.until:%Y-%m-%d %H:%M} UTC"
    return chosen, None


def check(connection: duckdb.DuckDBPyConnection, hosts: list[str], baseline: Baseline,
          overrides: list[tuple[str, Threshold]], worse_only: bool = False) -> CheckResult:
    """Check `hosts` (every lab host when empty) against `baseline`. Raises UserError for a host or baseline host
    the warehouse does not have, naming the closest it has."""
    all_runs = fleet.runs(connection)
    by_host: dict[str, list[fleet.Run]] = {}
    for run in all_runs:
        by_host.setdefault(run.host, []).append(run)
    known = sorted(by_host)
    if not known:
        raise UserError("the warehouse has no runs yet: run `fleetscope ingest results/` first")
    for host in [*hosts, *([baseline.host] if baseline.host else [])]:
        if host not in by_host:
            raise UserError(f"no host {host!r} in the warehouse{fleet.did_you_mean(host, known)}")
    golden = next(run for run in by_host[baseline.host] if run.recency == 1) if baseline.host else None
    chosen = hosts or [host for host in known if not any(run.is_reference for run in by_host[host] if run.recency == 1)]
    checks = []
    for host in dict.fromkeys(chosen):
        latest = next(run for run in by_host[host] if run.recency == 1)
        against, note = _pick_baseline(baseline, latest, by_host[host], golden)
        checks.append(HostCheck(host, latest, against, "no baseline" if against is None else "held", note))
    keys = [key for item in checks if item.baseline for key in (item.baseline.key, item.latest.key)]
    if keys:
        values = fleet.run_values(fleet.batch(connection, keys).rows, keys)
        samples = fleet.level_samples(connection, keys)
        columns = gated_columns([values[key] for key in keys])
        for item in checks:
            if item.baseline is None:
                continue
            item.figures = check_host(item.latest, item.baseline, values, samples, columns, overrides, worse_only)
            item.state = "changed" if item.moved else "held"
    return CheckResult(baseline, checks, overrides, worse_only, datetime.now(UTC))


def moved_since_previous(previous: dict | None, latest: dict, samples: dict, previous_run: fleet.Run | None,
                         latest_run: fleet.Run) -> list[dict]:
    """The figures of a host's latest run that moved from its previous run by the default thresholds (both
    directions): the fleet page's 'changed' badge. `previous` and `latest` are the runs' values."""
    if previous is None or previous_run is None:
        return []
    values = {previous_run.key: previous, latest_run.key: latest}
    figures = check_host(latest_run, previous_run, values, samples, gated_columns([previous, latest]), [], False)
    return [figure for figure in figures if figure["status"] in ("moved", "lost")]


# ---- output --------------------------------------------------------------------------------------------

def public(figure: dict) -> dict:
    """A figure as --format json writes it (without its Column)."""
    return {key: value for key, value in figure.items() if key != "column"}


def describe(figure: dict) -> str:
    """'DRAM latency 90.2 ns -> 144 ns (+60.0%, Mann-Whitney p = 1.2e-08; threshold 5%, worse)'."""
    column = figure["column"]
    before, after = fleet.format_value(column, figure["baseline"]), fleet.format_value(column, figure["latest"])
    if figure["status"] == "lost":
        return f"{figure['label']} {before} -> not measured (lost; threshold {figure['threshold']})"
    if figure["relative"] is not None:
        change = f"{figure['relative']:+.1%}"
    else:
        difference = figure["difference"] or 0
        change = f"{'+' if difference >= 0 else '-'}{fleet.format_value(column, abs(difference))}"
    test = f", Mann-Whitney p = {figure['p_value']:.2g}" if figure["p_value"] is not None else ", not tested"
    direction = f", {figure['direction']}" if figure["direction"] else ""
    return (f"{figure['label']} {before} -> {after} "
            f"({change}{test}; threshold {figure['threshold']}{direction})")


def render_text(result: CheckResult) -> str:
    lines = [f"fleetscope check against {result.baseline.describe()}: {len(result.hosts)} "
             f"host{'' if len(result.hosts) == 1 else 's'}, "
             f"{len(result.changed)} changed"
             f"{', regressions only' if result.worse_only else ''}"]
    order = {"changed": 0, "held": 1, "no baseline": 2}
    for item in sorted(result.hosts, key=lambda item: (order[item.state], item.host)):
        if item.state == "no baseline":
            lines.append(f"  no baseline  {item.host}: {item.note}")
            continue
        runs = f"{item.latest.run_id} vs {item.baseline.host + ' ' if item.baseline.host != item.host else ''}" \
               f"{item.baseline.run_id}"
        if item.state == "held":
            measured = sum(figure["status"] == "held" for figure in item.figures)
            lines.append(f"  held         {item.host} ({runs}): {measured} figures within their thresholds")
            continue
        lines.append(f"  CHANGED      {item.host} ({runs}):")
        lines.extend(f"                 {describe(figure)}" for figure in item.moved)
        if any(figure["metric"] == fleet.FLAGGED.key and figure["direction"] == "worse" for figure in item.moved):
            lines.append("                 (the latest run has more plausibility flags: read them on its page before "
                         "blaming the machine; a busy or drifting host moves every figure)")
    if result.changed:
        lines.append(f"exit status {EXIT_CHANGED}: {len(result.changed)} host(s) changed; "
                     "`fleetscope compare HOST@BASELINE_RUN HOST` shows one side by side")
    return "\n".join(lines) + "\n"


def to_json(result: CheckResult) -> dict:
    """`check --format json` (its keys are documented in README.md and pinned by a test)."""
    return {
        "baseline": {"kind": result.baseline.kind, "text": result.baseline.text, "describe": result.baseline.describe()},
        "checked_at": result.checked_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rule": {"test": "Mann-Whitney U, two-sided, on the raw latency samples of each level's plateau",
                 "alpha": fleet.SIGNIFICANT_P, "worse_only": result.worse_only,
                 # in the order they are tried, the first match wins: the user's (the last given first), then the defaults
                 "thresholds": [{"figure": pattern, "relative": threshold.relative, "absolute": threshold.absolute,
                                 "given": index < len(result.thresholds)}
                                for index, (pattern, threshold) in enumerate([*reversed(result.thresholds),
                                                                              *DEFAULT_THRESHOLDS])]},
        "changed": [item.host for item in result.changed],
        "exit_status": result.exit_status,
        "hosts": [{"host": item.host, "state": item.state, "note": item.note,
                   "latest": {"run_id": item.latest.run_id, "started_at": _iso(item.latest.started_at)},
                   "baseline": {"host": item.baseline.host, "run_id": item.baseline.run_id,
                                "started_at": _iso(item.baseline.started_at)} if item.baseline else None,
                   "figures": [public(figure) for figure in item.figures]}
                  for item in result.hosts],
    }


def _iso(value: object) -> str | None:
    moment = as_utc(value)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


# XML 1.0 allows no control characters but tab, newline and carriage return: a host's text is escaped.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def _xml_text(text: object) -> str:
    return _NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}", str(text))


def to_junit(result: CheckResult) -> str:
    """JUnit XML: one <testsuite> per host, one <testcase> per figure; a moved or lost figure is a <failure>, a
    figure not measured on both sides and a host without a baseline are <skipped>."""
    suites = ElementTree.Element("testsuites", name="fleetscope check")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    stamp = result.checked_at.strftime("%Y-%m-%dT%H:%M:%S")
    for item in result.hosts:
        suite = ElementTree.SubElement(suites, "testsuite", name=_xml_text(f"fleetscope check: {item.host}"),
                                       timestamp=stamp, hostname=_xml_text(item.host))
        properties = ElementTree.SubElement(suite, "properties")
        for name, value in (("latest_run", item.latest.run_id),
                            ("baseline", result.baseline.describe()),
                            ("baseline_run", f"{item.baseline.host}@{item.baseline.run_id}" if item.baseline else "")):
            ElementTree.SubElement(properties, "property", name=name, value=_xml_text(value))
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        cases = item.figures or [None]
        for figure in cases:
            name = f"{figure['label']} ({figure['metric']})" if figure else "baseline"
            case = ElementTree.SubElement(suite, "testcase", name=_xml_text(name),
                                          classname=_xml_text(f"fleetscope.check.{item.host}"), time="0")
            counts["tests"] += 1
            if figure is None:
                ElementTree.SubElement(case, "skipped", message=_xml_text(f"no baseline: {item.note}"))
                counts["skipped"] += 1
            elif figure["status"] in ("moved", "lost"):
                failure = ElementTree.SubElement(case, "failure", type=figure["status"], message=_xml_text(describe(figure)))
                failure.text = _xml_text(json.dumps(public(figure), indent=2, default=str))
                counts["failures"] += 1
            elif figure["status"] in ("not measured", "new", "not gated"):
                ElementTree.SubElement(case, "skipped", message=_xml_text(f"{figure['status']}: {figure['note']}"))
                counts["skipped"] += 1
            else:
                output = ElementTree.SubElement(case, "system-out")
                output.text = _xml_text(describe(figure))
        for key, count in counts.items():
            suite.set(key, str(count))
            totals[key] += count
        suite.set("errors", "0")
        suite.set("time", "0")
    for key, count in totals.items():
        suites.set(key, str(count))
    suites.set("errors", "0")
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"
