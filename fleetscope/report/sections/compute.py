"""The compute family on a host page: the core clock under load (per instruction class, as cores wake; and its
ramp from idle), peak FLOP/s per vector width with FLOP per cycle, and the host's roofline (compute ceilings
from peak_flops, memory ceilings from the bandwidth per inferred level, SAXPY at its arithmetic intensity)."""

from __future__ import annotations

import math

from fleetscope.report import charts
from fleetscope.report.charts import NUMBER, Chart, n, q, tip
from fleetscope.report.sections.section import CORE_KIND, Column, Figure, Headline, Section, SectionData
from fleetscope.units import format_number, format_quantity

# Roofline x axis: FLOP per byte, whole powers of two around the ridges and points.
_MIN_INTENSITY, _MAX_INTENSITY = 2.0**-6, 2.0**6


def _class_order(rows: list[dict]) -> list[str]:
    """Classes narrowest first (scalar_int, then by vector width), as the report query orders them."""
    return list(dict.fromkeys(row["class"] for row in rows))


def clock_chart(section: SectionData) -> dict | None:
    """The clock per instruction class as cores wake: one line per class; on a host with more than one core
    kind, each step's point shaped by the kind of the core it added."""
    frequency = section.units["frequency"]
    kinds = charts.core_kinds(section.rows)
    records = [{"class": row["class"], "active": row["active_cores"], "clock": frequency.scaled(row["clock_ghz"] * 1e9),
                "slowest": frequency.scaled(row["slowest_thread_ghz"] * 1e9)
                if row["slowest_thread_ghz"] is not None else None,
                "vs_one": row["vs_one_core"], "vs_scalar": row["vs_scalar"], "share": row["min_cpu_share"],
                **({"core kind": row["core_kind"] or "kind unknown"} if len(kinds) > 1 else {})}
               for row in section.rows]
    charts.require_positive(records, "active", "active-core count")
    records, dropped = charts.drawable(records, "clock", log=False)
    if not records:
        return None
    actives = sorted({record["active"] for record in records})
    log2 = {"type": "log", "base": 2, "domain": [actives[0], max(actives[-1], 2)]}
    x = (q("active", "active cores (one thread each)", scale=log2, axis=charts.whole_axis(actives))
         if actives[-1] >= 8 else q("active", "active cores (one thread each)", axis=charts.whole_axis(actives)))
    order = _class_order(section.rows)
    # at least a fifth of the top clock tall: a flat curve's 1% of noise must look like 1%, a turbo curve's
    # 15% fall like 15%
    clocks = [record["clock"] for record in records] + [record["slowest"] for record in records
                                                        if record["slowest"] is not None]
    domain = [min(*clocks, 0.8 * max(clocks)), 1.02 * max(clocks)]
    chart = Chart().layer(records, {"type": "line", "point": len(kinds) < 2},
                          x=x, y=q("clock", f"clock ({frequency.symbol}), median of windows",
                                   scale={"domain": domain, "nice": True}, axis={"format": NUMBER}),
                          color=n("class", "instruction class", sort=order, legend=charts.LINE_LEGEND),
                          tooltip=[tip("class", number=False), tip("active", "active cores", whole=True),
                                   tip("clock", frequency.symbol), tip("slowest", f"slowest thread ({frequency.symbol})"),
                                   tip("vs_one", "vs one core"), tip("vs_scalar", "vs scalar_int"),
                                   tip("share", "least CPU share")])
    if len(kinds) > 1:
        chart.layer(records, {"type": "point", "filled": True, "size": 60}, x=x, y=q("clock"),
                    color=n("class", sort=order, legend=None),
                    shape=n("core kind", "kind of the newest core", sort=kinds, legend={"orient": "bottom"}))
    flat = all(abs(record["vs_one"] - 1) <= 0.03 for record in records if record["vs_one"] is not None)
    return chart.spec("Core clock under load",
                      "dependent adds per ns of each thread's CPU time, with the class's multiply-adds beside them"
                      + ("; flat: no turbo curve or vector offset within 3%" if flat else "")
                      + charts.left_out(dropped, "points"), height=240)


def _merged(rows: list[dict], value: str) -> list[tuple[str, float]]:
    """Ceilings within 2% of one another as one (the name of each, the highest value): fma256 and fma512 of a
    core that double-pumps 512-bit vectors are one line, not two on top of each other."""
    merged: list[tuple[list[str], float]] = []
    for row in sorted(rows, key=lambda row: -row[value]):
        if merged and row[value] >= merged[-1][1] * 0.98:
            merged[-1][0].append(row["name"])
        else:
            merged.append(([row["name"]], row[value]))
    return [(" = ".join(names), top) for names, top in merged]


def _roofline_series(rows: list[dict]) -> tuple[list[dict], list[dict], tuple[float, float]]:
    """The roofline's lines (two end points each, FLOP/byte and GFLOP/s), the measured points and the
    intensity domain (whole powers of two around them). A memory ceiling rises until the highest compute
    ceiling of its scope; a compute ceiling runs flat from where the fastest memory ceiling of its scope meets
    it. One core: every class in FP64 and the widest in FP32; all cores: the widest class, FP64 and FP32."""
    compute = [row for row in rows if row["kind"] == "compute" and row["gflop_s"]]
    memory = [row for row in rows if row["kind"] == "memory" and row["gb_s"]]
    points = [{"name": row["name"], "x": row["flop_per_byte"], "y": row["gflop_s"]} for row in rows
              if row["kind"] == "measured" and row["gflop_s"] and row["flop_per_byte"]]
    xs = [point["x"] for point in points]
    low = min([_MIN_INTENSITY, *xs], key=float)
    low = 2.0 ** math.floor(math.log2(low))
    high = _MAX_INTENSITY
    lines = []
    for scope, label in (("one core", "1 core"), ("all cores", "all cores")):
        scoped = [row for row in compute if row["scope"] == scope]
        widest = max((row["vector_bits"] or 0 for row in scoped), default=0)
        shown = [row for row in scoped if (row["precision"] == "fp64" and scope == "one core")
                 or row["vector_bits"] == widest]
        roofs = [row for row in memory if row["scope"] == scope]
        top = max((row["gflop_s"] for row in shown), default=None)
        fastest = max((row["gb_s"] for row in roofs), default=None)
        for name, gb_s in _merged(roofs, "gb_s"):
            end = min(top / gb_s, high) if top else high
            series = f"{name}: {format_number(gb_s)} GB/s, {label}"
            lines += [{"series": series, "scope": scope, "x": low, "y": gb_s * low},
                      {"series": series, "scope": scope, "x": end, "y": gb_s * end}]
        for name, gflop_s in _merged(shown, "gflop_s"):
            start = max(gflop_s / fastest, low) if fastest else low
            series = f"{name}: {format_number(gflop_s)} GFLOP/s, {label}"
            lines += [{"series": series, "scope": scope, "x": start, "y": gflop_s},
                      {"series": series, "scope": scope, "x": high, "y": gflop_s}]
    return lines, points, (low, high)


def roofline_chart(section: SectionData) -> dict | None:
    """The host's roofline on log-log axes: GFLOP/s against arithmetic intensity (FLOP per byte moved)."""
    lines, points, (low, high) = _roofline_series(section.extra_rows)
    if not lines and not points:
        return None
    ys = [record["y"] for record in lines + points if record["y"] > 0]
    exponents = range(round(math.log2(low)), round(math.log2(high)) + 1)
    x = q("x", "arithmetic intensity (FLOP per byte moved)",
          scale={"type": "log", "base": 2, "domain": [low, high], "nice": False},
          axis={"values": [2.0**exponent for exponent in exponents if exponent % 2 == 0], "format": "~g",
                "grid": False})
    y = q("y", "GFLOP/s", scale=charts.log_scale(ys), axis={"format": NUMBER})
    chart = Chart()
    if lines:
        chart.layer(lines, {"type": "line", "strokeWidth": 1.6}, x=x, y=y,
                    color=n("series", "ceiling", legend={"orient": "right", "labelLimit": 300, "symbolType": "stroke"},
                            sort=list(dict.fromkeys(record["series"] for record in lines))),
                    strokeDash=n("scope", "scope", sort=["one core", "all cores"], legend=None),
                    detail=n("series"), tooltip=[tip("series", "ceiling", number=False)])
    if points:
        chart.layer(points, {"type": "point", "filled": True, "color": "#111", "size": 50}, x=x, y=y,
                    tooltip=[tip("name", "measured", number=False), tip("x", "FLOP/byte"), tip("y", "GFLOP/s")])
    return chart.spec("Roofline", "flat: peak_flops' ceilings; rising: bandwidth per inferred level; solid one core, "
                      "dashed all cores; dots: SAXPY at each stride (one core; strides of 8 and more share one "
                      "intensity)", height=300)


def clock_figure(rows: list[dict]) -> Figure:
    """The integer clock with one core active and with all."""
    row = rows[0] if rows else None
    if not row or row["clock_1_core_ghz"] is None:
        return Figure(None, "core_clock measured no one-core integer clock")
    text = f"{format_quantity(row['clock_1_core_ghz'], 'ghz')} with 1 core"
    cores = row["clock_cores"]
    if cores and cores > 1 and row["clock_all_cores_ghz"] is not None:
        text += f" · {format_quantity(row['clock_all_cores_ghz'], 'ghz')} with all {cores}"
    return Figure(text, values={"clock_1_core_ghz": row["clock_1_core_ghz"],
                                "clock_all_cores_ghz": row["clock_all_cores_ghz"] if cores and cores > 1 else None})


def flops_figure(rows: list[dict]) -> Figure:
    """The widest class's FP64 peak on one core (with its FLOP per cycle) and on all cores."""
    row = rows[0] if rows else None
    if not row or row["fp64_1_core_gflop_s"] is None:
        return Figure(None, "peak_flops measured no one-core FP64 figure")
    per_cycle = row["fp64_flop_per_cycle"]
    text = (f"{format_quantity(row['fp64_1_core_gflop_s'], 'gflop_s')} on 1 core ({row['flops_class']}"
            + (f", {format_number(per_cycle)} FLOP/cycle" if per_cycle is not None else "") + ")")
    cores = row["flops_cores"]
    if cores and cores > 1 and row["fp64_all_cores_gflop_s"] is not None:
        text += f" · {format_quantity(row['fp64_all_cores_gflop_s'], 'gflop_s')} on all {cores}"
    return Figure(text, values={"fp64_1_core_gflop_s": row["fp64_1_core_gflop_s"],
                                "fp64_all_cores_gflop_s": row["fp64_all_cores_gflop_s"] if cores and cores > 1 else None,
                                "fp64_flop_per_cycle": per_cycle})


_ENERGY_NOTE = ("Package watts, joules per GFLOP and package temperatures are read around each point where the host "
                "exposes RAPL (powercap) and a package sensor (hwmon); where it does not (a VM), the columns stay empty "
                "and the warehouse view point_energy says why.")

SECTIONS: tuple[Section, ...] = (
    Section("core-clock", "core_clock", "Core clock under load", "core_clock_curve", "core_clock_curve", clock_chart,
            (Column("class", "class"), Column("vector_bits", "bits", "count"),
             Column("active_cores", "active cores", "count"), CORE_KIND, Column("clock_ghz", "clock", "ghz"),
             Column("vs_one_core", "vs one core", "number"), Column("vs_scalar", "vs scalar_int", "number"),
             Column("slowest_thread_ghz", "slowest thread", "ghz"),
             Column("min_cpu_share", "least CPU share", "percent"),
             Column("package_watts", "package W", "number"),
             Column("temperature_before_c", "°C before", "number"), Column("temperature_after_c", "°C after", "number"),
             Column("throttled", "throttled", "bool"), Column("windows", "windows", "count")),
            "The clock each core runs at with 1, 2, 4 … all cores busy (one pinned thread per physical core, fastest "
            "core kind first), for each instruction class the CPU has: 64 dependent integer adds (one cycle each) per "
            "round, beside 32 of the class's multiply-adds, so the adds measure the clock the vector load leaves. "
            "Clocks are per ns of each thread's own CPU time; the least CPU share says how much of a window other "
            "work took. These are short-term clocks (a fraction of a second per point), not the sustained clock "
            "after a power limit's time window. " + _ENERGY_NOTE,
            extra_view="clock_ramp", extra_query="clock_ramp",
            extra_columns=(Column("repeat", "ramp", "count"), Column("cpu", "CPU", "count"),
                           Column("idle_ms", "idle (ms)", "number"), Column("slices", "slices", "count"),
                           Column("slice_us", "slice (µs)", "number"), Column("first_ghz", "first slice", "ghz"),
                           Column("median_ghz", "median", "ghz"), Column("max_ghz", "fastest slice", "ghz"),
                           Column("min_cpu_share", "least CPU share", "percent")),
            drawn=(Column("slowest_thread_ghz", "", "ghz"),)),
    Section("peak-flops", "peak_flops", "Peak FLOP/s and roofline", "peak_flops", "peak_flops", roofline_chart,
            (Column("class", "class"), Column("vector_bits", "bits", "count"), Column("precision", "precision"),
             Column("threads", "cores", "count"), Column("gflop_s", "FLOP/s", "gflop_s"),
             Column("gflop_s_per_core", "per core", "gflop_s"), Column("clock_ghz", "clock", "ghz"),
             Column("flop_per_cycle_per_core", "FLOP/cycle/core", "number"),
             Column("fma_latency_cycles", "FMA latency (cycles)", "number"),
             Column("chains_needed", "chains needed", "number"), Column("chains", "chains run", "count"),
             Column("min_cpu_share", "least CPU share", "percent"), Column("package_watts", "package W", "number"),
             Column("joules_per_gflop", "J/GFLOP", "number")),
            "Independent multiply-add chains of each class in registers, one pinned thread per physical core, "
            "alternating with windows of the clock ruler under the same class: FLOP/cycle/core = FLOP/s / cores / "
            "clock, so a shortfall reads as the clock (lower clock, full FLOP/cycle) or the core (fewer FLOP/cycle). "
            "A multiply-add is 2 FLOP per lane. The roofline's memory ceilings are the bandwidth per inferred level "
            "(one thread) and the thread sweep's DRAM peak (all cores); its points are SAXPY's strides at their "
            "arithmetic intensity (bytes: the lines each sweep visits plus y's write-backs). " + _ENERGY_NOTE,
            extra_view="roofline", extra_query="roofline",
            extra_columns=(Column("kind", "ceiling or point"), Column("scope", "scope"), Column("name", "name"),
                           Column("gflop_s", "FLOP/s", "gflop_s"), Column("gb_s", "bandwidth", "gb_s"),
                           Column("flop_per_byte", "FLOP/byte", "number"),
                           Column("ridge_flop_per_byte", "ridge (FLOP/byte)", "number"))),
)

HEADLINES: tuple[Headline, ...] = (
    Headline("Core clock (integer)", "core_clock", "core-clock", "compute_headline", clock_figure,
             (Column("clock_1_core_ghz", "clock 1 core", "ghz"),
              Column("clock_all_cores_ghz", "clock all cores", "ghz"))),
    Headline("Peak FP64 (widest vector)", "peak_flops", "peak-flops", "compute_headline", flops_figure,
             (Column("fp64_1_core_gflop_s", "FP64 1 core", "gflop_s"),
              Column("fp64_all_cores_gflop_s", "FP64 all cores", "gflop_s"),
              Column("fp64_flop_per_cycle", "FP64 FLOP/cycle", "number"))),
)
