"""The summary at the top of a host page: the machine (CPU, cores and threads, memory, kernel,
virtualization), the run (status, profile, duration), the hierarchy as one table (per level the effective
and sysfs size, latency in ns and cycles, DRAM last), the headline figures the experiment modules name,
and the plausibility flags with links to the sections they concern.

A figure the run did not measure says why (not run, skipped or failed with the experiment's own words, or
what the inference found instead); it is never filled in.
"""

from __future__ import annotations

from typing import Callable

from fleetscope.charts import one_policy
from fleetscope.experiments import HEADLINES, SECTIONS, Figure
from fleetscope.report_derived import DERIVED
from fleetscope.units import format_bytes, format_number, format_time_ns

_REASON_CHARS = 240


def describe_cpu(facts: dict) -> dict:
    """The CPU's name and, where known, its microarchitecture. Today that is the vendor's family and model
    numbers; a table of microarchitectures can name them here, in this one place."""
    family, model = facts.get("cpu_family"), facts.get("cpu_model")
    numbers = ", ".join(f"{name} {value} (0x{value:x})" for name, value in (("family", family), ("model", model))
                        if isinstance(value, int))
    vendor = facts.get("cpu_vendor")
    microarchitecture = " ".join(part for part in (vendor, numbers) if part) or None
    return {"name": facts.get("cpu_model_name"), "microarchitecture": microarchitecture}


def _duration(seconds: int | float | None) -> str | None:
    if seconds is None:
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


def _hierarchy(derived: dict[str, list[dict]]) -> list[dict]:
    """The inferred levels of one page policy; the last (memory) has no effective size to show."""
    levels = one_policy(derived["inferred_levels"])
    return [{"level": level["level"],
             "effective": format_bytes(level["capacity_bytes"]) or None if index < len(levels) - 1 else None,
             "sysfs": format_bytes(level["sysfs_size_bytes"]) or None, "latency": format_time_ns(level["latency_ns"]) or None,
             "cycles": format_number(level["latency_cycles"]) or None, "page_policy": level["page_policy"]}
            for index, level in enumerate(levels)]


def build(fetch: Callable[[str], list[dict]], run: dict, facts: dict, experiments: list[dict],
          derived: dict[str, list[dict]], sections: list[dict], fail: Callable[[str, str, str], None]) -> dict:
    """The summary's template variables for one run (`fetch(query)`: the run's rows of a report query); a
    figure that cannot be computed is reported to `fail(part, what, error)` and shown in its place."""
    by_name = {experiment["experiment"]: experiment for experiment in experiments}
    on_page = {item["section"].id for item in sections}
    headlines = []
    for headline in HEADLINES:
        shown = {"label": headline.label, "value": None, "missing": None, "error": None,
                 "section": headline.section if headline.section in on_page else None}
        try:
            rows = derived[headline.source] if headline.source in derived else fetch(headline.source)
            figure = headline.figure(rows)
        except Exception as error:  # noqa: BLE001 - one figure must not stop the page
            shown["error"] = f"{type(error).__name__}: {error}"
            fail(f"summary: {headline.label}", "computing the figure", shown["error"])
        else:
            shown["value"] = figure.text
            shown["missing"] = None if figure.text else why_missing(headline.experiment, by_name, figure)
        headlines.append(shown)
    levels = _hierarchy(derived)
    levels_section = next(section for section in SECTIONS
                          if section.id == next(table.section for table in DERIVED if table.name == "inferred_levels"))
    level_notes = "; ".join(level["note"] for level in derived["inferred_levels"] if level["note"])
    flags = derived["flags"]
    return {
        "cpu": describe_cpu(facts),
        "facts": facts,
        "memory": format_bytes(facts.get("mem_total_bytes")) or None,
        "duration": _duration(run["duration_s"]),
        "levels": levels,
        "levels_section": levels_section.id,
        "levels_missing": None if levels else why_missing(levels_section.experiment, by_name,
                                                          Figure(None, level_notes or None)),
        "headlines": headlines,
        "flag_counts": {status: sum(flag["status"] == status for flag in flags)
                        for status in ("flagged", "clear", "not_run")},
        "flagged": [{"flag": flag, "section": next((item["section"] for item in sections if flag in item["flags"]), None)}
                    for flag in flags if flag["status"] == "flagged"],
    }
