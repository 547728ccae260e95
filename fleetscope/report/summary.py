"""The summary at the top of a host page: the machine (CPU and its microarchitecture, cores and threads,
memory, kernel, virtualization, inventory groups), the run (status, profile, duration), the hierarchy as one
table (per level the effective and sysfs size, latency in ns and cycles, DRAM last), the headline figures the
experiment modules name, and the plausibility flags with links to the sections they concern.

A figure the run did not measure says why (not run, skipped or failed with the experiment's own words, or
what the inference found instead); it is never filled in. The numbers behind the hierarchy and the figures
(`run_values`) are what the fleet page, `compare` and `outliers` put side by side: one computation for all.
"""

from __future__ import annotations

import json
from typing import Callable

from fleetscope.analyze import precision
from fleetscope.report.charts import by_core_kind, level_size_text, one_policy
from fleetscope.report.sections import HEADLINES, SECTIONS, Figure, Headline
from fleetscope.report.derived_tables import SHOWN_TABLES
from fleetscope.units import format_bytes, format_number, format_time_ns, size_parts_text

_REASON_CHARS = 240
_EMULATION_CHARS = 400  # the facts module's own sentence fits; a host's longer text is cut


def describe_cpu(facts: dict) -> dict:
    """The CPU's name, its microarchitecture as the warehouse names it (view host_identity, from the table in
    microarchitectures.sql) with its cores and segment, and the numbers it was named from: vendor, family
    and model on x86, implementer and parts on Arm."""
    family, model = facts.get("cpu_family"), facts.get("cpu_model")
    numbers = ", ".join(f"{name} {value} (0x{value:x})" for name, value in (("family", family), ("model", model))
                        if isinstance(value, int))
    vendor = facts.get("cpu_vendor") if facts.get("cpu_vendor") != "unavailable" else None
    parts = facts.get("cpu_parts") or []
    arm = (f"implementer {facts['cpu_implementer']}, part{'s' if len(parts) > 1 else ''} {', '.join(parts)}"
           if facts.get("cpu_implementer") and parts else None)
    detail = [text for text in (facts.get("uarch_cores") and f"{facts['uarch_cores']} cores", facts.get("uarch_segment"))
              if text]
    return {"name": facts.get("cpu_model_name"), "microarchitecture": facts.get("microarchitecture"),
            "known": bool(facts.get("uarch_known")), "detail": ", ".join(detail) or None,
            "numbers": arm or " ".join(part for part in (vendor, numbers) if part) or None,
            "virtual": facts.get("virtualization") not in (None, "none"),
            "emulation": emulation_reason(facts.get("facts"))}


def emulation_reason(facts_json: str | None) -> str | None:
    """Why the facts name no CPU where the host's userland ran under a user-mode emulator (qemu-user): the
    facts module's cpu.emulation.reason, shortened; None on every other host."""
    try:
        cpu = json.loads(facts_json or "{}").get("cpu")
    except (TypeError, ValueError, AttributeError):
        return None
    emulation = cpu.get("emulation") if isinstance(cpu, dict) else None
    reason = emulation.get("reason") if isinstance(emulation, dict) else None
    if not isinstance(reason, str) or not reason:
        return None
    return reason if len(reason) <= _EMULATION_CHARS else reason[:_EMULATION_CHARS - 1] + "…"


def _duration(seconds: int | float | None) -> str | None:
    if seconds is None or not 0 <= seconds < float("inf"):  # a run cannot take less than no time
        return None
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return " ".join(f"{value} {unit}" for value, unit in ((hours, "h"), (minutes, "min"), (rest, "s"))
                    if value or unit == "s" and not (hours or minutes))


def _shorten(text: str) -> str:
    return text if len(text) <= _REASON_CHARS else text[:_REASON_CHARS - 1] + "…"


def why_missing(experiment: str, by_name: dict[str, dict], figure: Figure) -> str:
    """Why a figure is absent, in the run's own words."""
    record = by_name.get(experiment)
    if record is None:
        return f"not run: this run has no {experiment} experiment"
    if record["status"] == "skipped":
        return _shorten(f"skipped: {record['notes'] or 'the experiment recorded no reason'}")
    if record["status"] == "failed":
        return _shorten(f"failed: {record['error'] or 'the experiment recorded no error'}")
    return _shorten(f"not inferred: {figure.note}" if figure.note else "measured, but there is no figure to show")


def level_column_keys(level: str) -> tuple[str, str]:
    """The fleet columns of one inferred level: its size (best estimate) and its latency ('l2_size', 'l2_latency').
    A size column comes with its bracket and method as '<key>_low', '<key>_high', '<key>_method' (size_parts)."""
    return f"{level.lower()}_size", f"{level.lower()}_latency"


SIZE_PARTS = ("low", "high", "method")


def size_parts(values: dict, key: str) -> tuple:
    """A bracketed column's (low, high, estimate, method) from one run's values, as format_size takes them (a level's
    size; the TLB figure's entries come the same way)."""
    return values.get(f"{key}_low"), values.get(f"{key}_high"), values.get(key), values.get(f"{key}_method")


def levels(derived: dict[str, list[dict]]) -> list[dict]:
    """The inferred levels of one page policy with their numbers, of the fastest core kind where a host has
    more than one (what the fleet, compare and outliers put side by side); the last (memory) has no size."""
    return _numbered(one_policy(derived["inferred_levels"]))


_SIZE_FIELDS = ("capacity_bytes", "size_low_bytes", "size_high_bytes", "size_method", "size_text")


def _numbered(rows: list[dict]) -> list[dict]:
    return [level if index < len(rows) - 1 else {**level, **dict.fromkeys(_SIZE_FIELDS)}
            for index, level in enumerate(rows)]


def kind_levels(derived: dict[str, list[dict]]) -> list[dict]:
    """Each core kind's hierarchy where the host has more than one kind (its rows name their kind: all the
    kinds measured, or the one a run measured), fastest first: [{core_kind, cpu, levels (as `levels` gives
    them)}]; empty on a host with one kind."""
    kinds = by_core_kind(derived["inferred_levels"])
    if len(kinds) < 2 and not any(kind for kind, _unused in kinds):
        return []
    return [{"core_kind": kind, "cpu": next((row["cpu"] for row in rows if row.get("cpu") is not None), None),
             "levels": _numbered(one_policy(rows))} for kind, rows in kinds]


def kind_line(kind: dict) -> tuple[str, str]:
    """One kind's hierarchy on one line, as (the kind, its levels): ('P-core (CPU 4)', 'L1 45–49 KiB · sysfs
    48 KiB · 1 ns · 5 cycles; L2 1.19–1.3 MiB · sysfs 1.25 MiB · 3.2 ns · 16 cycles; …; DRAM 90 ns · 450 cycles')."""
    levels = [f"{level['level']} " + " · ".join(part for part in (
        level_size_text(level), level_latency_text(level),
        level["latency_cycles"] is not None and f"{format_number(level['latency_cycles'])} cycles") if part)
        for level in kind["levels"]]
    where = f" (CPU {kind['cpu']})" if kind["cpu"] is not None else ""
    return f"{kind['core_kind'] or 'unlabelled CPUs'}{where}", "; ".join(levels) or "nothing inferred"


def level_latency_text(level: dict) -> str | None:
    """A level's latency for people: '4.65 ns', or on a relative curve (ns over L1) '+2.35 ns over L1'."""
    if level.get("latency_ns") is not None:
        return format_time_ns(level["latency_ns"])
    if level.get("latency_over_l1_ns") is not None:
        return f"+{format_time_ns(level['latency_over_l1_ns'])} over L1"
    return None


def _hierarchy(derived: dict[str, list[dict]]) -> list[dict]:
    """The summary's table, one row per level: its size as a bracket and best estimate; a relative curve's
    latencies as '+2.35 ns' under 'over L1'."""
    return [{"level": level["level"],
             **dict(zip(("effective", "estimate"),
                        size_parts_text(level.get("size_low_bytes"), level.get("size_high_bytes"),
                                        level["capacity_bytes"], level.get("size_method")))),
             "sysfs": format_bytes(level["sysfs_size_bytes"]) or None,
             "latency": (level_latency_text(level) if level.get("latency_over_l1_ns") is None
                         else f"+{format_time_ns(level['latency_over_l1_ns'])}"),
             "cycles": format_number(level["latency_cycles"]) or None, "page_policy": level["page_policy"]}
            for level in levels(derived)]


def figures(fetch: Callable[[str], list[dict]], derived: dict[str, list[dict]],
            headlines: tuple[Headline, ...] = HEADLINES) -> list[tuple[Headline, Figure | None, str | None]]:
    """Each headline's figure for one run, or the error that stopped it: (headline, figure, error text)."""
    computed = []
    for headline in headlines:
        try:
            rows = derived[headline.source] if headline.source in derived else fetch(headline.source)
            computed.append((headline, headline.figure(rows), None))
        except Exception as error:  # noqa: BLE001 - one figure must not stop the page
            computed.append((headline, None, f"{type(error).__name__}: {error}"))
    return computed


def run_values(derived: dict[str, list[dict]],
               computed: list[tuple[Headline, Figure | None, str | None]]) -> dict[str, float | None]:
    """The numbers of one run's summary by fleet column: each level's size (its best estimate, with its bracket
    and method: size_parts) and latency (as level_column_keys names them) and each figure's values. A relative
    reference curve's latencies (ns over L1) are no level's latency: the fleet, compare and outliers get none."""
    values: dict[str, float | str | None] = {}
    for level in levels(derived):
        size, latency = level_column_keys(level["level"])
        if level["capacity_bytes"] is not None or level.get("size_low_bytes") is not None:
            values[size] = level["capacity_bytes"]
            values.update({f"{size}_low": level.get("size_low_bytes"), f"{size}_high": level.get("size_high_bytes"),
                           f"{size}_method": level.get("size_method")})
        values[latency] = None if level.get("relative_to_l1") else level["latency_ns"]
    for headline, figure, _unused in computed:
        for column in headline.columns:
            values[column.key] = figure.values.get(column.key) if figure else None
            values.update({f"{column.key}_{part}": figure.values[f"{column.key}_{part}"] for part in SIZE_PARTS
                           if figure and figure.values.get(f"{column.key}_{part}") is not None})
    return values


def _precision(fetch: Callable[[str], list[dict]], run: dict) -> dict:
    """How sure the run is: a short figure for the Run card, the sentence, and per experiment the share of
    points that met the target and the median CI95 half-width (fleetscope.analyze.precision)."""
    measured = precision.from_rows(fetch, run["run_id"], run["host"])
    if measured.points == 0:
        short = None
    elif measured.points_with_target == 0:
        short = f"fixed sample counts; median CI95 ±{precision.percent(measured.median_achieved_rel)}"
    else:
        short = (f"{precision.percent(measured.share_met)} of points at their target; "
                 f"median CI95 ±{precision.percent(measured.median_achieved_rel)}")
    return {"short": short, "sentence": measured.sentence, "by_experiment": {
        experiment.experiment: {
            "met": precision.percent(experiment.share_met) if experiment.target_rel is not None else "fixed count",
            "median": f"±{precision.percent(experiment.median_achieved_rel)}"
            if experiment.median_achieved_rel is not None else None}
        for experiment in measured.experiments}}


def build(fetch: Callable[[str], list[dict]], run: dict, facts: dict, experiments: list[dict],
          derived: dict[str, list[dict]], sections: list[dict], fail: Callable[[str, str, str], None]) -> dict:
    """The summary's template variables for one run (`fetch(query)`: the run's rows of a report query); a
    figure that cannot be computed is reported to `fail(part, what, error)` and shown in its place."""
    by_name = {experiment["experiment"]: experiment for experiment in experiments}
    on_page = {item["section"].id for item in sections}
    computed = figures(fetch, derived)
    headlines = []
    for headline, figure, error in computed:
        shown = {"label": headline.label, "value": None, "missing": None, "error": error,
                 "section": headline.section if headline.section in on_page else None}
        if error:
            fail(f"summary: {headline.label}", "computing the figure", error)
        else:
            shown["value"] = figure.text
            shown["missing"] = None if figure.text else why_missing(headline.experiment, by_name, figure)
        headlines.append(shown)
    hierarchy = _hierarchy(derived)
    levels_section = next(section for section in SECTIONS
                          if section.id == next(table.section for table in SHOWN_TABLES if table.name == "inferred_levels"))
    level_notes = "; ".join(level["note"] for level in derived["inferred_levels"] if level["note"])
    flags = derived["flags"]
    return {
        "precision": _precision(fetch, run),
        "cpu": describe_cpu(facts),
        "facts": facts,
        "memory": format_bytes(facts.get("mem_total_bytes")) or None,
        "duration": _duration(run["duration_s"]),
        "levels": hierarchy,
        "levels_relative": any(level.get("latency_over_l1_ns") is not None for level in levels(derived)),
        "kind_levels": [dict(zip(("kind", "levels"), kind_line(kind)), id=f"summary-levels-{index}",
                             page_policy=kind["levels"][0]["page_policy"] if kind["levels"] else None)
                        for index, kind in enumerate(kind_levels(derived))],
        "levels_section": levels_section.id,
        "levels_missing": None if hierarchy else why_missing(levels_section.experiment, by_name,
                                                             Figure(None, level_notes or None)),
        "headlines": headlines,
        "flag_counts": {status: sum(flag["status"] == status for flag in flags)
                        for status in ("flagged", "clear", "not_run")},
        "values": run_values(derived, computed),
        "flagged": _flagged_by_rule(flags, sections),
    }


def _flagged_by_rule(flags: list[dict], sections: list[dict]) -> list[dict]:
    """The flagged rows grouped by rule, in the order their rules first flag: {rule, entries: [{flag, section}],
    sections: the distinct sections they appear in}. One line per rule keeps the summary on the first screen
    however many points a rule flags; every row is in the plausibility section."""
    grouped: dict[str, list[dict]] = {}
    for flag in flags:
        if flag["status"] == "flagged":
            section = next((item["section"] for item in sections if flag in item["flags"]), None)
            grouped.setdefault(flag["rule"], []).append({"flag": flag, "section": section})
    return [{"rule": rule, "entries": entries,
             "sections": list({entry["section"].id: entry["section"] for entry in entries if entry["section"]}.values())}
            for rule, entries in grouped.items()]
