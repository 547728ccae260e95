"""The pages that put hosts side by side: the fleet page (reports/index.html, written by `fleetscope report`)
and the comparison page (`fleetscope compare`).

Both draw the curves named in CURVES, each read by its query warehouse/queries/report/curve_<id>.sql. The
fleet page shows summaries, not every point: per host its summary's numbers and a thinned copy (at most
MAX_CURVE_POINTS points) of four curves, one line per host coloured by group, redrawn in the browser by one
shared script (templates/report/fleet.js, written once into assets/) as the table is filtered. `report`
keeps each run's summary beside its page (fleetscope.report.pages), so the fleet page costs no query of its own.
The comparison page overlays every family's curves, one line per operand (the median over its runs, with
the middle half of its runs as a band), above the per-level differences and their significance.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from fleetscope.report import charts, fleet, summary
from fleetscope.report.charts import NUMBER, Chart, n, q, tip
from fleetscope.report.sections import Column
from fleetscope.units import KINDS, choose_unit, to_base

MAX_CURVE_POINTS = 24
# Curves are drawn in their base unit, the one the warehouse stores.
_Y_SYMBOLS = {"ns": "ns", "gb_s": "GB/s", "mb_s": "MB/s", "gflop_s": "GFLOP/s"}


@dataclass(frozen=True)
class Curve:
    id: str
    family: str
    title: str
    x_title: str
    y_title: str
    x_kind: str        # bytes | count | gb_s | ratio (FLOP per byte, fractions too): how the x axis is labelled
    y_kind: str        # a quantity kind of fleetscope.units.KINDS (ns, gb_s, mb_s, gflop_s) or number
    x_log: bool
    y_log: bool

    @property
    def query(self) -> str:
        return f"curve_{self.id}"


CURVES: tuple[Curve, ...] = (
    Curve("latency", "Latency", "Latency vs working set", "working set", "latency", "bytes", "ns", True, True),
    Curve("tlb", "Latency", "TLB reach (smallest page size)", "pages touched (one line each)", "per access", "count",
          "ns", True, True),
    Curve("mlp", "Latency", "Memory-level parallelism", "interleaved chains k", "MLP(k) = t(1) / t(k)", "count",
          "number", False, False),
    Curve("bandwidth", "Bandwidth", "Read bandwidth vs working set (one thread)", "working set", "read bandwidth",
          "bytes", "gb_s", True, False),
    Curve("threads", "Bandwidth", "Read bandwidth vs threads (DRAM-sized)", "threads", "read bandwidth, all threads",
          "count", "gb_s", False, False),
    Curve("loaded_latency", "Bandwidth", "Loaded latency (read traffic)", "load bandwidth (GB/s)", "chase latency",
          "gb_s", "ns", False, False),
    Curve("roofline_one_core", "Compute", "Roofline, one core (FP64, DRAM)", "arithmetic intensity (FLOP/byte)",
          "attainable FLOP/s", "ratio", "gflop_s", True, True),
    Curve("roofline_all_cores", "Compute", "Roofline, all cores (FP64, DRAM)", "arithmetic intensity (FLOP/byte)",
          "attainable FLOP/s", "ratio", "gflop_s", True, True),
    Curve("aio", "CPU, OS and I/O", "Random reads vs queue depth (io_uring)", "queue depth", "read rate", "count",
          "mb_s", True, False),
    Curve("storage", "Storage", "Storage p99 read latency vs queue depth (randread)", "queue depth", "p99 latency",
          "count", "ns", True, True),
    Curve("mlc", "Intel MLC", "Intel MLC loaded latency", "bandwidth drawn (GB/s)", "loaded latency", "gb_s", "ns",
          False, False),
)
FLEET_CURVES = tuple(curve for curve in CURVES if curve.id in ("latency", "bandwidth", "loaded_latency", "tlb"))


def _round(value: float) -> float:
    """Four significant digits, a chart draws three; whole numbers (working sets, pages) stay exact."""
    return value if float(value).is_integer() else float(f"{value:.4g}")


def thin(rows: list[dict], limit: int = MAX_CURVE_POINTS) -> list[list[float]]:
    """One run's curve as [xs, ys] in x order, at most `limit` points (evenly spaced in point order, the
    first and the last always kept), each rounded as _round does."""
    rows = sorted(rows, key=lambda row: row["x"])
    if len(rows) > limit:
        step = (len(rows) - 1) / (limit - 1)
        rows = [rows[round(index * step)] for index in range(limit)]
    return [[_round(row["x"]) for row in rows], [_round(row["y"]) for row in rows]]


def run_summary(fetch: Callable[[str], list[dict]], values: dict[str, float | None], with_curves: bool) -> dict:
    """What the fleet page keeps of one run: its numbers, the core kinds its hierarchy was inferred for
    (fastest first, whose numbers they are; empty on a one-kind host) and, for a host's latest run, its thinned
    curves."""
    curves = {curve.id: thin(fetch(curve.query)) for curve in FLEET_CURVES} if with_curves else {}
    kinds = [kind["core_kind"] for kind in summary.kind_levels({"inferred_levels": fetch("derived_inferred_levels")})]
    return {"values": values, "core_kinds": kinds,
            "curves": {key: points for key, points in curves.items() if points[0]}}


# ---- numbers for people --------------------------------------------------------------------------------

def column_units(columns: list[Column], rows: list[dict[str, float | None]]) -> dict[str, object]:
    """One display unit per quantity column (ns, GB/s ...) from the values it shows."""
    return {column.key: choose_unit(KINDS[column.kind][0], [to_base(row.get(column.key), column.kind) for row in rows
                                                            if isinstance(row.get(column.key), (int, float))])
            for column in columns if column.kind in KINDS}


def cell(column: Column, value: float | None, units: dict[str, object], values: dict | None = None) -> str | None:
    """A fleet cell; a level's size shows its bracket and best estimate from the run's `values`."""
    if fleet.is_size(column) and values is not None:
        text = fleet.size_text(values, column)
        return None if text == "—" else text
    if not isinstance(value, (int, float)):
        return None
    if column.key in units:
        return units[column.key].text(to_base(value, column.kind))
    return fleet.format_value(column, value)


def header(column: Column, units: dict[str, object]) -> str:
    return f"{column.header} ({units[column.key].symbol})" if column.key in units else column.header


# ---- the fleet page ------------------------------------------------------------------------------------

def inventory_keys(groups_by_host: dict[str, tuple[str, ...] | None]) -> dict[str, str]:
    """Each host's inventory groups as one colour key, without the groups every host shares ('lab' of a
    whole lab): 'rack_a', 'rack_a + gpu'."""
    recorded = [set(groups) for groups in groups_by_host.values() if groups is not None]
    shared = set.intersection(*recorded) if len(recorded) > 1 else set()
    keys = {}
    for host, groups in groups_by_host.items():
        if groups is None:
            keys[host] = "(groups not recorded)"
        else:
            keys[host] = " + ".join(group for group in groups if group not in shared) or " + ".join(groups) or "(none)"
    return keys


# Lab hosts' lines solid, reference hosts' (published curves) dashed: the records' field "kind".
LAB, REFERENCE = "lab host", "reference host"


def _overlay_spec(curve: Curve, records: list[dict], colour_title: str, *, dataset: str | None,
                  bands: list[dict] | None = None, order: list[str] | None = None, dashed: bool = False,
                  y_symbol: str | None = None) -> dict:
    """Curves of several hosts or operands on one chart: one line per `line` field, coloured by `group`
    (legend in `order`, else alphabetical), and with `dashed` a reference host's line dashed (field "kind").
    `dataset` names data the page fills in (the fleet page); else `records` are inline. `y_symbol`: the unit the
    y values are in, where not the curve's base unit."""
    xs = [record["x"] for record in records]
    ys = [record["y"] for record in records] + [value for band in bands or () for value in (band["low"], band["high"])]
    if curve.x_log:
        x = charts.log2_axis(xs, "x", curve.x_title, as_bytes=curve.x_kind == "bytes", max_ticks=charts.HALF_WIDTH_TICKS)
        if curve.x_kind == "ratio":  # 1/64 .. 64: fractions must not print as 0
            x["axis"]["format"] = "~g"
    elif curve.x_kind == "count":  # threads, chains: whole numbers only, never a tick at 1.5
        x = q("x", curve.x_title, axis=charts.whole_ticks(xs))
    else:
        x = q("x", curve.x_title, axis={"format": NUMBER})
    symbol = y_symbol or _Y_SYMBOLS.get(curve.y_kind)
    y_unit = f" ({symbol})" if symbol else ""
    y_scale = charts.log_scale(ys) if curve.y_log else {"zero": curve.y_kind != "ns"}
    y = q("y", f"{curve.y_title}{y_unit}{', log scale' if curve.y_log else ''}", scale=y_scale, axis={"format": NUMBER})
    colour = n("group", colour_title, legend=charts.LINE_LEGEND, **({"sort": order} if order else {}))
    chart = Chart()
    if bands:
        chart.layer(bands, {"type": "area", "opacity": 0.15}, x=x, y=q("low", scale=y_scale), y2={"field": "high"},
                    color=colour)
    line = {"data": {"name": dataset}} if dataset else {"data": chart.data(records)}
    dash = {"strokeDash": n("kind", "", scale={"domain": [LAB, REFERENCE], "range": [charts.SOLID, charts.DASHED]},
                            legend=charts.DASH_LEGEND)} if dashed else {}
    chart.layers.append({**line, "mark": {"type": "line", "point": len(records) <= 400, "strokeWidth": 1.4},
                         "encoding": {"x": x, "y": y, "color": colour, "detail": n("line"), "order": q("x"), **dash,
                                      "tooltip": [tip("line", "line", number=False), tip("group", colour_title, number=False),
                                                  tip("x", curve.x_title), tip("y", curve.y_title)]}})
    return chart.spec(curve.title, curve.family + ("; dashed: reference hosts' published curves" if dashed else ""),
                      height=260)


def _rows(hosts: list[dict], indices: dict[str, int], values: dict[str, dict], previous: dict[str, dict | None],
          summaries: dict[str, dict | None], columns: list[Column], units: dict[str, object],
          moved: dict[str, list[str]] | None = None) -> list[dict]:
    """One table row per host: its cells for `columns`, its flags, its largest change since its previous run and
    the figures that moved by `fleetscope check`'s rule (`moved`, the 'changed' badge)."""
    rows = []
    for host in hosts:
        before = (previous.get(host["host"]) or {}).get("values")
        rows.append({
            "index": indices[host["host"]], "host": host,
            "cells": [(cell(column, values[host["host"]].get(column.key), units, values[host["host"]]),
                       fleet.size_order(values[host["host"]], column) if fleet.is_size(column)
                       else values[host["host"]].get(column.key))
                      for column in columns],
            "flagged": values[host["host"]].get(fleet.FLAGGED.key),
            "change": fleet.change(before, values[host["host"]], columns) if before else None,
            "measured": summaries.get(host["host"]) is not None,
            "moved": (moved or {}).get(host["host"], []),
        })
    return rows


def fleet_context(hosts: list[dict], previous: dict[str, dict | None], summaries: dict[str, dict | None],
                  moved: dict[str, list[str]] | None = None) -> dict:
    """The fleet page's variables: `hosts` are fleet_overview rows (with `page`), `summaries` each host's
    latest summary by host, `previous` the summary of the run before (None where there is none), `moved` the
    figures of each host that moved since its previous run by `fleetscope check`'s rule, in words (the
    'changed' badge).

    Reference hosts (published curves) are a section of their own: no lab grouping, median or outlier group
    takes them in, and their table shows how each curve was measured. Their curves are drawn beside the lab's,
    dashed, except a relative one (ns over L1), which has no place on an absolute axis."""
    values = {host["host"]: (summaries.get(host["host"]) or {}).get("values", {}) for host in hosts}
    indices = {host["host"]: index for index, host in enumerate(hosts)}
    lab = [host for host in hosts if not host["is_reference"]]
    references = [host for host in hosts if host["is_reference"]]
    columns = fleet.measured_columns([values[host["host"]] for host in lab])
    units = column_units(columns, [values[host["host"]] for host in lab])
    reference_columns = [column for column in fleet.measured_columns([values[host["host"]] for host in references])
                         if column.key not in (fleet.THP_GRANTED.key,)]
    reference_units = column_units(reference_columns, [values[host["host"]] for host in references])
    keys = inventory_keys({host["host"]: tuple(host["inventory_groups"]) if host["inventory_groups"] is not None
                           else None for host in lab})
    keys.update({host["host"]: REFERENCE_GROUP for host in references})
    runs = [fleet.Run(host["host"], host["last_run_id"], host["last_run_started_at"], host["last_run_status"], 1,
                      host["microarchitecture"], bool(host["uarch_known"]), host["cpu_model_name"],
                      tuple(host["inventory_groups"]) if host["inventory_groups"] is not None else None,
                      bool(host["is_reference"]), host["reference_source"])
            for host in hosts]
    by_key = {run.key: values[run.host] for run in runs}
    found = fleet.outliers(runs, by_key, fleet.peer_columns(columns))
    lab_values = {host["host"]: values[host["host"]] for host in lab}
    return {
        "columns": [{"key": column.key, "header": header(column, units)} for column in columns],
        "rows": _rows(lab, indices, values, previous, summaries, columns, units, moved),
        "reference_columns": [{"key": column.key, "header": header(column, reference_units)}
                              for column in reference_columns],
        "reference_rows": [{**row, "method": fleet.reference_method(row["host"]["reference_pattern"],
                                                                    row["host"]["reference_page_bytes"],
                                                                    row["host"]["reference_relative"])}
                           for row in _rows(references, indices, values, previous, summaries, reference_columns,
                                            reference_units)],
        "relative": [host["host"] for host in references if host["reference_relative"]],
        # the lab's groups only: a published curve measured by another tool is no member of a lab group
        "groupings": [_grouping("microarchitecture", "Microarchitecture",
                                {host["host"]: [host["microarchitecture"]] for host in lab}, columns, lab_values, units),
                      _grouping("inventory", "Inventory group",
                                {host["host"]: list(host["inventory_groups"] or ["(groups not recorded)"])
                                 for host in lab}, columns, lab_values, units)],
        "references": found.references,
        "outliers": _outlier_rows(found, {host["host"]: host["page"] for host in hosts}),
        "max_points": MAX_CURVE_POINTS,
        # hosts with several core kinds: their numbers and curves are the fastest kind's measured (never a blend)
        "kinds": [{"host": host["host"], "page": host["page"], "kinds": (summaries.get(host["host"]) or {})["core_kinds"]}
                  for host in hosts if (summaries.get(host["host"]) or {}).get("core_kinds")],
        "outlier_groups": found.groups,
        "changed": [{"host": host["host"], "page": host["page"], "moved": moved[host["host"]]} for host in hosts
                    if (moved or {}).get(host["host"])],
        "data": _fleet_data(hosts, keys, summaries),
    }


# The colour key of a reference host (a published curve, not a lab machine) on the fleet page's charts.
REFERENCE_GROUP = "reference hosts"


# The columns a group's summary shows: latencies, bandwidths, MLP and storage, the figures groups differ by.
_GROUP_COLUMNS = r"(l\d+|dram)_latency|read_.*_gb_s|mlp|storage_p99_read_ns"


def _grouping(key: str, title: str, members_by_host: dict[str, list[str]], columns: list[Column],
              values: dict[str, dict], units: dict[str, object]) -> dict:
    """Each group's hosts and the median of each headline column over them."""
    shown = [column for column in columns if re.fullmatch(_GROUP_COLUMNS, column.key)]
    members: dict[str, list[str]] = defaultdict(list)
    for host, groups in members_by_host.items():
        for group in groups:
            members[group].append(host)
    groups = []
    for group, hosts in sorted(members.items(), key=lambda item: (-len(item[1]), item[0])):
        medians = []
        for column in shown:
            present = [values[host].get(column.key) for host in hosts if isinstance(values[host].get(column.key), (int, float))]
            medians.append(cell(column, statistics.median(present), units) if present else None)
        groups.append({"group": group, "hosts": sorted(hosts), "medians": medians})
    return {"key": key, "title": title, "headers": [header(column, units) for column in shown], "groups": groups}


def _outlier_rows(found: fleet.Outliers, pages: dict[str, str]) -> list[dict]:
    return [{"host": item["host"], "page": pages[item["host"]], "group": item["group"], "label": item["column"].header,
             "value": fleet.format_value(item["column"], item["value"]),
             "group_median": fleet.format_value(item["column"], item["group_median"]),
             "relative": f"{item['relative']:+.0%}", "peers": item["peers"], "cause": item["cause"]}
            for item in found.found]


def _fleet_data(hosts: list[dict], keys: dict[str, str], summaries: dict[str, dict | None]) -> dict:
    """What fleet.js draws: per host its name and colour keys, per chart the spec (data filled in by the
    script for the hosts the filter shows) and each host's curve as [host index, xs, ys]."""
    curves = {curve.id: [[index, *(summaries.get(host["host"]) or {}).get("curves", {})[curve.id]]
                         for index, host in enumerate(hosts)
                         if curve.id in (summaries.get(host["host"]) or {}).get("curves", {})]
              for curve in FLEET_CURVES}
    specs = {}
    for curve in FLEET_CURVES:
        records = [{"x": x, "y": y} for _unused, xs, ys in curves[curve.id] for x, y in zip(xs, ys)]
        if records:
            specs[curve.id] = _overlay_spec(curve, records, "group", dataset=curve.id,
                                            dashed=any(hosts[index]["is_reference"] for index, *_rest in curves[curve.id]))
    return {"hosts": [{"name": host["host"], "page": host["page"], "microarchitecture": host["microarchitecture"],
                       "inventory": keys[host["host"]], "cpu": host["cpu_model_name"] or "(CPU model not recorded)",
                       "kind": REFERENCE if host["is_reference"] else LAB}
                      for host in hosts],
            "curves": {key: value for key, value in curves.items() if key in specs}, "specs": specs}


# ---- the comparison page -------------------------------------------------------------------------------

@dataclass
class Comparison:
    """Operands and what `compare` shows of them: each measured figure per operand with its differences from
    the first (fleet.deltas), and the curves (operand_curves) when asked for."""
    operands: list[fleet.Operand]
    rows: list[dict]
    curves: list[dict]
    kinds: dict[tuple[str, str], list[dict]] = field(default_factory=dict)  # summary.kind_levels per run
    flags: dict[tuple[str, str], list[dict]] = field(default_factory=dict)  # fleet.flagged_rows per run


def compare(connection, texts: list[str], *, with_curves: bool = True, threshold: float = fleet.SIGNIFICANT_CHANGE,
            alpha: float = fleet.SIGNIFICANT_P) -> Comparison:
    """Resolve the operands and read everything `fleetscope compare` and the notebooks show of them."""
    every_run = fleet.runs(connection)
    operands = [fleet.resolve(text, every_run) for text in texts]
    keys = [run.key for operand in operands for run in operand.runs]
    batch = fleet.batch(connection, keys)
    values = fleet.run_values(batch.rows, keys)
    samples = fleet.level_samples(connection, keys)
    rows = fleet.deltas(operands, values, samples, fleet.measured_columns(values.values()), threshold, alpha)
    return Comparison(operands, rows, operand_curves(operands, batch.rows) if with_curves else [],
                      fleet.kind_levels(batch.rows, keys), fleet.flagged_rows(batch.rows, keys))


def _y_unit(curve: Curve, records: list[dict]):
    """The unit a curve's y values read best in (fleetscope.units.choose_unit, as a table of them would print
    them: storage latencies in µs), or None for a curve whose values have no unit to choose."""
    if curve.y_kind not in KINDS:
        return None
    quantity = KINDS[curve.y_kind][0]
    return choose_unit(quantity, [to_base(record["y"], curve.y_kind) for record in records])


def operand_curves(operands: list[fleet.Operand], rows_of: Callable[[str, tuple[str, str]], list[dict]]
                   ) -> list[dict]:
    """Per curve with data: each operand's median curve (per matching point, the median x and y over the
    operand's runs) and, where it has several runs, the band between their 25th and 75th percentiles."""
    drawn = []
    for curve in CURVES:
        records, bands = [], []
        for operand in operands:
            by_point: dict[object, list[dict]] = defaultdict(list)
            for run in operand.runs:
                for row in rows_of(curve.query, run.key):
                    by_point[row["point"]].append(row)
            for point, points in by_point.items():
                x = statistics.median(row["x"] for row in points)
                ys = sorted(row["y"] for row in points)
                records.append({"line": operand.text, "group": operand.text, "x": x, "y": statistics.median(ys),
                                "runs": len(points), "kind": REFERENCE if all(run.is_reference for run in operand.runs)
                                else LAB})
                if len(ys) > 1:
                    quartiles = statistics.quantiles(ys, n=4, method="inclusive")
                    bands.append({"group": operand.text, "x": x, "low": quartiles[0], "high": quartiles[2]})
        if curve.x_log:
            records = [record for record in records if record["x"] > 0]
            bands = [band for band in bands if band["x"] > 0]
        if curve.y_log:
            records = [record for record in records if record["y"] > 0]
            bands = [band for band in bands if band["low"] > 0]
        if records:
            unit = _y_unit(curve, records)
            if unit is not None:  # the unit the page's tables print these values in (storage: µs, not ns)
                records = [{**record, "y": unit.scaled(to_base(record["y"], curve.y_kind))} for record in records]
                bands = [{**band, "low": unit.scaled(to_base(band["low"], curve.y_kind)),
                          "high": unit.scaled(to_base(band["high"], curve.y_kind))} for band in bands]
            drawn.append({"curve": curve, "spec": _overlay_spec(curve, records, "operand", dataset=None, bands=bands,
                                                                order=[operand.text for operand in operands],
                                                                dashed=any(record["kind"] == REFERENCE
                                                                           for record in records),
                                                                y_symbol=unit.symbol if unit else None)})
    return drawn


# The page's words for why a difference had no test (fleet.deltas' notes, which --format json keeps whole).
_NO_TEST = {"a reference host's published curve gives one value per size, not samples": "none: a published curve",
            "a summary figure: no samples to test": "none: a summary figure",
            "no raw samples of this level's plateau on both sides: no test": "none: no samples on both sides"}


def compare_context(operands: list[fleet.Operand], rows: list[dict], curves: list[dict],
                    flags: dict[tuple[str, str], list[dict]] | None = None,
                    threshold: float = fleet.SIGNIFICANT_CHANGE) -> dict:
    """The comparison page's variables: the operands (and how each reference curve among them was measured),
    what differs (tested and significant, and large without a test), the per-column table with each operand's
    flagged figures marked, the operands' plausibility flags and the curves by family."""
    flags = flags or {}
    table = []
    for row in rows:
        column = row["column"]
        deltas = []
        for delta in row["deltas"]:
            text = f"{delta['relative']:+.1%}" if delta["relative"] is not None else None
            if delta["p_value"] is not None:
                test = f"p = {delta['p_value']:.2g} ({delta['samples'][0]} vs {delta['samples'][1]} samples)"
            else:
                test = _NO_TEST.get(delta["note"], delta["note"])
            deltas.append({"text": text, "test": test, "significant": delta["significant"]})
        doubted = [sorted({flag["rule"] for run in operand.runs
                           for flag in fleet.flags_of_column(column.key, flags.get(run.key, []))})
                   for operand in operands]
        shown = ([fleet.bracket_text(column, bracket) for bracket in row["brackets"]] if row.get("brackets")
                 else [fleet.format_value(column, value) for value in row["values"]])
        table.append({"label": column.header, "shown": shown,
                      "flags": doubted, "deltas": deltas, "level": row["level"]})
    families: dict[str, list[dict]] = defaultdict(list)
    for item in curves:
        families[item["curve"].family].append(item)
    hosts = {run.host for operand in operands for run in operand.runs}
    runs = list(dict.fromkeys(run for operand in operands for run in operand.runs))
    return {"operands": operands, "table": table, "any_flagged_figure": any(any(row["flags"]) for row in table),
            "families": list(families.items()), "moved": fleet.moved(rows),
            "untested": fleet.untested(rows, threshold), "tested": fleet.tests_ran(rows),
            "no_test_because": ("a reference host's published curve gives one value per size, not the samples a test "
                                "needs" if any(run.is_reference for run in runs)
                                else "no level has raw samples of its plateau on both sides"),
            "references": [run for run in runs if run.is_reference],
            "flags": [{"run": run, "flags": flags.get(run.key, []), "rules": _by_rule(flags.get(run.key, []))}
                      for run in runs],
            "drift": len(hosts) == 1 and all(operand.kind in ("run", "host") for operand in operands),
            "not_drawn": [curve.title for curve in CURVES if curve.id not in {item["curve"].id for item in curves}]}


def _by_rule(flags: list[dict]) -> list[dict]:
    """Flagged rows per rule, in the order they come: {rule, count, subjects, first} (first: its first row)."""
    rules: dict[str, list[dict]] = {}
    for flag in flags:
        rules.setdefault(flag["rule"], []).append(flag)
    return [{"rule": rule, "count": len(rows), "subjects": list(dict.fromkeys(row["subject"] for row in rows)),
             "first": rows[0]} for rule, rows in rules.items()]
