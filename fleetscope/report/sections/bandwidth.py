"""The bandwidth family on a host page: bandwidth vs working set with the inferred levels marked,
order × stride, read/write mixes, the thread-intensity sweep, loaded latency with its knee, SAXPY and the
prefetcher effect; and the summary's read-bandwidth and loaded-latency figures."""

from __future__ import annotations

from fleetscope.analyze.inference import KNEE_MIN_RISE
from fleetscope.report import charts
from fleetscope.report.charts import NUMBER, Chart, n, q, tip
from fleetscope.report.sections.section import CORE_KIND, Column, Figure, Headline, Section, SectionData, mean_std
from fleetscope.units import format_bytes, format_gb_s, format_time_ns


def _variant(row: dict) -> str:
    """read / copy (nt) / mix 7:3 (regular): one legend entry per op and store."""
    name = f"mix {row['read_lines']}:{row['write_lines']}" if row["op"] == "mix" else row["op"]
    return name if row["store"] in (None, "none") else f"{name} ({row['store']})"


def _rate_records(section: SectionData, **fields) -> list[dict]:
    """One record per row: the rate and its CI in the section's unit, plus `fields` (name: row -> value)."""
    rate = section.units["rate"]
    return [{"rate": rate.scaled(row["median_gb_s"] * 1e9) if row["median_gb_s"] is not None else None,
             "ci_low": rate.scaled(row["ci95_low_gb_s"] * 1e9) if row["ci95_low_gb_s"] is not None else None,
             "ci_high": rate.scaled(row["ci95_high_gb_s"] * 1e9) if row["ci95_high_gb_s"] is not None else None,
             **{name: value(row) for name, value in fields.items()}} for row in section.rows]


def bandwidth_chart(section: SectionData) -> dict | None:
    """Rate vs working set per op and store (and core kind, on a host with several) with the CI as a band; sysfs
    sizes and inferred levels marked."""
    rate = section.units["rate"]
    kinds = charts.core_kinds(section.rows)
    records = _rate_records(section, working_set_bytes=lambda row: row["working_set_bytes"], variant=_variant,
                            **({"core kind": lambda row: row["core_kind"]} if len(kinds) > 1 else {}),
                            isa=lambda row: row["isa"], working_set=lambda row: format_bytes(row["working_set_bytes"]))
    charts.require_positive(records, "working_set_bytes", "working set")
    records, dropped = charts.drawable(records, "rate", log=False)
    if not records:
        return None
    marks = charts.cache_marks(section.caches)
    x = charts.log2_axis([record["working_set_bytes"] for record in records] + [mark["size_bytes"] for mark in marks],
                         "working_set_bytes", "working set per thread", as_bytes=True)
    color = n("variant", "op (stores)", legend=charts.LINE_LEGEND)
    dash = charts.kind_dash(kinds)
    chart = Chart()
    charts.ci_band(chart, records, x=x, color=color, opacity=0.12, detail=n("core kind") if dash else None)
    chart.layer(records, {"type": "line", "point": True}, x=x, color=color, **dash,
                y=q("rate", f"{rate.symbol} (lines moved)", axis={"format": NUMBER}),
                tooltip=[tip("variant", "op (stores)", number=False),
                         *([tip("core kind", number=False)] if dash else []),
                         tip("working_set", number=False), tip("isa", number=False),
                         tip("rate", rate.symbol)])
    charts.sysfs_rules(chart, marks)
    charts.level_marks(chart, charts.one_policy(section.derived.get("inferred_levels", [])))
    return chart.spec("Bandwidth vs working set", "median per op and store kind with 95% CI band; grey: sysfs cache "
                      "sizes; orange: inferred levels" + charts.kinds_note(kinds, sysfs_rules=True, dashed=True)
                      + charts.left_out(dropped, "points"), height=340)


def _bars(section: SectionData, x: str, x_title: str, group, group_title: str, title: str, subtitle: str
          ) -> dict | None:
    rate = section.units["rate"]
    records = [record for record in _rate_records(section, x=lambda row: row[x], group=group)
               if record["rate"] is not None]
    if not records:
        return None
    chart = Chart()
    charts.bars_with_ci(chart, records, x="x", x_title=x_title, y="rate", y_title=rate.symbol, low="ci_low",
                        high="ci_high", group="group", group_title=group_title,
                        sort=list(dict.fromkeys(record["x"] for record in records)),
                        tooltip=[tip("x", x_title, number=False), tip("group", group_title, number=False),
                                 tip("rate", rate.symbol)])
    return chart.spec(title, subtitle)


def stride_bandwidth_chart(section: SectionData) -> dict | None:
    return _bars(section, "stride_bytes", "stride (bytes)", lambda row: row["pattern"], "order",
                 "Read bandwidth by order and stride (DRAM-sized)",
                 "median with 95% CI; each block moves one 64 B line: rates count lines, not stride bytes")


def rw_mix_chart(section: SectionData) -> dict | None:
    return _bars(section, "read_percent", "read % of lines", lambda row: row["store"], "stores",
                 "Bandwidth by read/write mix (DRAM-sized)",
                 "median with 95% CI; exact ratios by construction; write-allocate reads of regular stores not counted")


def prefetch_chart(section: SectionData) -> dict | None:
    return _bars(section, "stride_bytes", "stride (bytes)",
                 lambda row: f"{row['prefetch']} / hw {row['hw_prefetchers']}", "software prefetch / hardware",
                 "Prefetcher effect (DRAM-sized reads)",
                 "median with 95% CI; stride 64: the stream prefetchers can follow; 4096: every block is a new page")


def _thread_step(kinds: list[str], row: dict) -> str:
    """What a thread-sweep step added: one CPU per core or SMT siblings in use, and on a host with more than
    one core kind the kind of the CPU the step added (its core_kind)."""
    placement = "SMT siblings in use" if row["smt_siblings_used"] else "one per core"
    return f"{row.get('core_kind') or 'kind unknown'}, {placement}" if len(kinds) > 1 else placement


def thread_sweep_chart(section: SectionData) -> dict | None:
    rate = section.units["rate"]
    kinds = charts.core_kinds(section.rows)
    records = [record for record in _rate_records(
        section, threads=lambda row: row["threads"], variant=_variant,
        placement=lambda row: _thread_step(kinds, row))
        if record["rate"] is not None and record["threads"] is not None]
    if not records:
        return None
    x = q("threads", "threads", axis=charts.whole_axis([record["threads"] for record in records]))
    y = q("rate", f"{rate.symbol}, all threads", axis={"format": NUMBER})
    color = n("variant", "op", legend=charts.LINE_LEGEND)
    title = "newest thread on" if len(kinds) > 1 else "placement"
    chart = Chart()
    charts.ci_band(chart, records, x=x, color=color)
    # one line per op over every step; the points' shape says what each step added (a line grouped by
    # shape too would break where the placement or the kind changes)
    data = chart.data(records)
    chart.layer(data, {"type": "line"}, x=x, y=y, color=color)
    chart.layer(data, {"type": "point", "filled": True, "size": 50}, x=x, y=y, color=color,
                shape=n("placement", title, sort=list(dict.fromkeys(record["placement"] for record in records))),
                tooltip=[tip("threads", whole=True), tip("variant", number=False), tip("placement", title, number=False),
                         tip("rate", rate.symbol)])
    order = ("threads go one per physical core first, then onto SMT siblings" if len(kinds) < 2 else
             "threads go one per physical core, fastest core kind first, then onto SMT siblings")
    return chart.spec("Bandwidth vs threads (DRAM-sized, one buffer per thread)", f"median with 95% CI band; {order}")


def loaded_latency_chart(section: SectionData) -> dict | None:
    """Latency against the bandwidth drawn, per traffic mix, with each curve's knee marked where it has one: the
    interval it lies in as a band, Kneedle's point as a diamond. The subtitle names the curves without one."""
    time, rate = section.units["time"], section.units["rate"]
    records = [{"traffic": row["traffic"], "delay": row["delay"],
                "rate": rate.scaled(row["bandwidth_gb_s"] * 1e9) if row["bandwidth_gb_s"] is not None else None,
                "latency": time.scaled(row["latency_ns"]), "outstanding_lines": row["outstanding_lines"]}
               for row in section.rows]
    records = [record for record in records if record["rate"] is not None and record["latency"] is not None]
    if not records:
        return None
    color = n("traffic", "traffic (r:w)")
    x = q("rate", f"load bandwidth ({rate.symbol})", axis={"format": NUMBER})
    y = q("latency", f"chase latency ({time.symbol})", scale={"zero": False}, axis={"format": NUMBER})
    chart = Chart()
    inferred = [row for row in section.derived.get("inferred_loaded_latency", []) if row["source"] == "loaded_latency"]
    knees = [row for row in inferred if row["knee_bandwidth_gb_s"] is not None and row["knee_latency_ns"] is not None]
    bands = [{"traffic": row["traffic"], "low": rate.scaled(row["knee_low_gb_s"] * 1e9),
              "high": rate.scaled(row["knee_high_gb_s"] * 1e9)}
             for row in knees if row.get("knee_low_gb_s") is not None and row.get("knee_high_gb_s") is not None]
    chart.layer(records, {"type": "line", "point": True}, x=x, y=y, color=color, order=q("rate"),
                tooltip=[tip("traffic", number=False), tip("delay", whole=True), tip("rate", rate.symbol),
                         tip("latency", time.symbol), tip("outstanding_lines", "lines in flight")])
    if bands:
        # after the lines: a merged legend draws the first layer's mark, and a faint band's would not read
        chart.layer(bands, {"type": "rect", "opacity": 0.12}, x=q("low"), x2={"field": "high"}, color=color,
                    tooltip=[tip("traffic", number=False), tip("low", f"knee from ({rate.symbol})"),
                             tip("high", f"knee to ({rate.symbol})")])
    marks = [{"traffic": row["traffic"], "rate": rate.scaled(row["knee_bandwidth_gb_s"] * 1e9),
              "latency": time.scaled(row["knee_latency_ns"]), "label": "knee"} for row in knees]
    if marks:
        data = chart.data(marks)
        chart.layer(data, {"type": "point", "shape": "diamond", "size": 220, "filled": False, "strokeWidth": 2},
                    x=q("rate"), y=q("latency"), color=color,
                    tooltip=[tip("traffic", number=False), tip("rate", f"Kneedle {rate.symbol}"),
                             tip("latency", f"Kneedle {time.symbol}")])
        chart.layer(data, {"type": "text", "dy": -14, "fontSize": 11}, x=q("rate"), y=q("latency"), color=color,
                    text=n("label"))
    kneeless = [row for row in inferred if row["knee_bandwidth_gb_s"] is None and row["points"] >= 3]
    knee_note = (f"band: the interval each knee lies in, diamond: Kneedle's point (a knee needs latency at "
                 f"saturation to reach {KNEE_MIN_RISE:g} × idle)" if marks else "")
    flat, straight = ([str(row["traffic"]) for row in kneeless if _rose_enough(row) is enough]
                      for enough in (False, True))
    flat_note = "; ".join(note for note in (
        f"no knee on {', '.join(flat)}: latency at saturation stays under {KNEE_MIN_RISE:g} × idle" if flat else "",
        f"no knee on {', '.join(straight)}: latency rises {KNEE_MIN_RISE:g} × idle or more but does not bend "
        "(no point lies below the line from its lightest to its heaviest load)" if straight else "") if note)
    return chart.spec("Loaded latency: throughput vs latency",
                      "one chase thread while load threads run with an injected delay; 'idle': the chase with no "
                      "load threads" + "".join(f"\n{note}" for note in (knee_note, flat_note) if note))


def _rose_enough(row: dict) -> bool:
    """Whether a loaded-latency curve's latency at saturation reached KNEE_MIN_RISE x idle (infer_loaded_latency
    looks for a knee only then); a curve whose rise is unknown did not."""
    saturated, idle = row.get("saturated_latency_ns"), row.get("idle_latency_ns")
    return saturated is not None and bool(idle) and saturated >= KNEE_MIN_RISE * idle


def saxpy_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    kinds = charts.core_kinds(section.rows)
    records = [{"stride": row["stride_elements"], "per_update": time.scaled(row["ns_per_update"]),
                "slowdown": row["slowdown_vs_stride1"], "effective_gb_s": row["effective_gb_s"],
                **charts.kind_field(kinds, row)} for row in section.rows]
    charts.require_positive(records, "stride", "stride")
    records, dropped = charts.drawable(records, "per_update", log=False)
    if not records:
        return None
    chart = Chart().layer(records, {"type": "line", "point": True},
                          x=charts.log2_axis([record["stride"] for record in records], "stride",
                                             "stride (8-byte elements)", as_bytes=False),
                          y=q("per_update", f"per update ({time.symbol})", axis={"format": NUMBER}),
                          **charts.kind_color(kinds),
                          tooltip=[*([tip("core kind", number=False)] if charts.kind_color(kinds) else []),
                                   tip("stride", whole=True),
                                   tip("per_update", time.symbol), tip("slowdown", "vs stride 1"),
                                   tip("effective_gb_s", "GB/s of line visits")])
    return chart.spec("SAXPY: the cost of a cache miss at constant work",
                      "every element updated once per pass at every stride; past 8 elements each update fetches "
                      "new lines" + charts.kinds_note(kinds) + charts.left_out(dropped, "strides"))


def read_bandwidth_figure(rows: list[dict]) -> Figure:
    """Read bandwidth with one thread and at the most threads the sweep ran (DRAM-sized buffers)."""
    read = [row for row in rows if row["op"] == "read"]
    if not read:
        return Figure(None, "the thread sweep has no read points")
    row = read[0]
    parts = []
    if row["single_thread_gb_s"] is not None:
        parts.append(f"{format_gb_s(row['single_thread_gb_s'])} with 1 thread")
    if row["all_threads_gb_s"] is not None and row["max_threads"] != 1:
        parts.append(f"{format_gb_s(row['all_threads_gb_s'])} with all {row['max_threads']} threads")
    if row["peak_threads"] not in (None, row["max_threads"]):
        parts.append(f"peak {format_gb_s(row['peak_gb_s'])} at {row['peak_threads']} "
                     f"thread{'' if row['peak_threads'] == 1 else 's'}")
    return Figure(" · ".join(parts) or None, values={
        "read_1_thread_gb_s": row["single_thread_gb_s"],
        "read_all_threads_gb_s": row["all_threads_gb_s"] if row["max_threads"] != 1 else None})


def knee_figure(rows: list[dict]) -> Figure:
    """The knee of the read-traffic curve (the loaded_latency kernel's first, then MLC's) as the bandwidth
    interval it lies in, or why the curve has none: its latency at saturation stays under KNEE_MIN_RISE x idle, or
    it rose that far without a bend."""
    curves = sorted((row for row in rows if row["peak_bandwidth_gb_s"] is not None),
                    key=lambda row: (row["source"] != "loaded_latency", row["traffic"] != "read",
                                     str(row["traffic"]), str(row["path"]), row["run_index"] or 0))
    if not curves:
        return Figure(None, rows[0]["note"] if rows else "no loaded-latency curve was inferred")
    row = curves[0]
    idle = format_time_ns(row["idle_latency_ns"])
    idle_from = " at no load" if row.get("idle_source") == "no-load point" else ""
    traffic = f"{row['traffic'] or 'unspecified'} traffic"
    if row["knee_bandwidth_gb_s"] is not None:
        kneedle = f"{format_gb_s(row['knee_bandwidth_gb_s'])} at {format_time_ns(row['knee_latency_ns'])}"
        if row.get("knee_low_gb_s") is not None and row.get("knee_high_gb_s") is not None:
            return Figure(f"between {format_gb_s(row['knee_low_gb_s'])} and {format_gb_s(row['knee_high_gb_s'])} "
                          f"(Kneedle {kneedle}; {traffic}, idle {idle}{idle_from})", row["note"])
        return Figure(f"{kneedle} ({traffic}, idle {idle}{idle_from})", row["note"])
    if row.get("saturated_latency_ns") is None or not row["idle_latency_ns"]:
        return Figure(None, row["note"])
    rise = row["saturated_latency_ns"] / row["idle_latency_ns"]
    measured = (f"{rise:.2f} × idle ({format_time_ns(row['saturated_latency_ns'])} vs {idle}{idle_from}, peak "
                f"{format_gb_s(row['peak_bandwidth_gb_s'])}, {traffic})")
    if _rose_enough(row):  # it rose enough, yet Kneedle found no point below the chord: a curve with no bend
        return Figure(f"none: latency at saturation is {measured}, but the curve does not bend: no point lies below "
                      "the line from its lightest to its heaviest load", row["note"])
    return Figure(f"none: latency at saturation is {measured}; a knee needs {KNEE_MIN_RISE:g} ×", row["note"])


_BW = (Column("op", "op"), Column("store", "stores"), Column("pattern", "order"),
       Column("stride_bytes", "stride", "bytes"), Column("working_set_bytes", "working set", "bytes"),
       Column("threads", "threads", "count"), Column("isa", "ISA"), Column("median_gb_s", "median", "gb_s"), mean_std("mean_gb_s", "std_gb_s", "gb_s"),
       Column("ci95_low_gb_s", "CI95 low", "gb_s"), Column("ci95_high_gb_s", "CI95 high", "gb_s"),
       Column("bytes_per_pass", "bytes / pass", "bytes"),
       Column("write_allocate_bytes_per_pass", "write-allocate / pass", "bytes"))
_BW_NOTE = ("Rates are 1e9 (GB/s) or 1e6 (MB/s) bytes per second counted in 64-byte lines moved (a strided block "
            "moves one line, never the stride); reads for ownership of regular stores are not counted, as in STREAM.")

SECTIONS: tuple[Section, ...] = (
    Section("bandwidth", "bandwidth", "Bandwidth vs working set", "bandwidth_points", "bandwidth_points_bandwidth",
            bandwidth_chart, (CORE_KIND, *_BW), _BW_NOTE, flag_prefix="bandwidth:"),
    Section("stride-bandwidth", "stride_bandwidth", "Pattern × stride bandwidth", "bandwidth_points",
            "bandwidth_points_stride_bandwidth", stride_bandwidth_chart, _BW, _BW_NOTE, flag_prefix="stride_bandwidth:"),
    Section("rw-mix", "rw_mix", "Read/write mix", "bandwidth_points", "bandwidth_points_rw_mix", rw_mix_chart,
            (Column("read_percent", "read %", "number"), Column("read_lines", "reads / group", "count"),
             Column("write_lines", "writes / group", "count"), *_BW[1:]), _BW_NOTE, flag_prefix="rw_mix:"),
    Section("thread-sweep", "thread_sweep", "Thread-intensity sweep", "bandwidth_points",
            "bandwidth_points_thread_sweep", thread_sweep_chart,
            (Column("cpus", "CPUs"), Column("core_kind", "newest thread on", per_kind=True),
             Column("smt_siblings_used", "SMT siblings used", "bool"), *_BW),
            "Each thread streams through a DRAM-sized buffer of its own. The saturation point is the fewest threads "
            "reaching 95% of the peak.", extra_view="thread_saturation", extra_query="thread_saturation",
            extra_columns=(Column("op", "op"), Column("store", "stores"),
                           Column("single_thread_gb_s", "1 thread", "gb_s"), Column("peak_gb_s", "peak", "gb_s"),
                           Column("peak_threads", "at threads", "count"),
                           Column("saturation_threads", "saturation (95% of peak)", "count"),
                           Column("smt_from_threads", "SMT siblings from", "count")),
            flag_prefix="thread_sweep:"),
    Section("loaded-latency", "loaded_latency", "Loaded latency", "loaded_latency_curve", "loaded_latency_curve",
            loaded_latency_chart,
            (Column("traffic", "traffic"), Column("delay", "delay", "count"), Column("load_threads", "load threads", "count"),
             Column("bandwidth_gb_s", "bandwidth", "gb_s"), Column("latency_ns", "latency", "ns"),
             mean_std("mean_latency_ns", "std_latency_ns", "ns"),
             Column("latency_min_ns", "min", "ns"), Column("outstanding_lines", "lines in flight", "number")),
            "Delays are spin iterations after each group of lines, so they are not comparable across hosts; the "
            "(bandwidth, latency) pairs are. Lines in flight by Little's law: bandwidth / 64 B × latency."),
    Section("saxpy", "saxpy", "SAXPY cache-miss impact", "saxpy_stride", "saxpy_stride", saxpy_chart,
            (CORE_KIND, Column("stride_elements", "stride (elements)", "count"),
             Column("ns_per_update", "per update", "ns"), mean_std("mean_ns_per_update", "std_ns_per_update", "ns"),
             Column("threads", "threads", "count"),
             Column("slowdown_vs_stride1", "vs stride 1", "number"),
             Column("effective_gb_s", "line visits", "gb_s"), Column("line_visits_per_pass", "line visits / pass", "count"),
             Column("array_bytes", "each array", "bytes")),
            "Constant work: every element is updated once per pass at every stride. Counters are per stride process; "
            "where the PMU cannot count an event its state says so and no value is shown.",
            extra_view="saxpy_counters", extra_query="saxpy_counters",
            extra_columns=(Column("stride_elements", "stride", "count"), Column("event", "event"),
                           Column("state", "state"), Column("value", "count", "count"),
                           Column("per_update", "per update", "number"))),
    Section("prefetch", "prefetch", "Prefetcher effect", "bandwidth_points", "bandwidth_points_prefetch", prefetch_chart,
            (Column("stride_bytes", "stride", "bytes"), Column("prefetch", "software prefetch"),
             Column("prefetch_distance_blocks", "distance (blocks)", "count"), Column("hw_prefetchers", "hardware"),
             Column("median_gb_s", "median", "gb_s"), mean_std("mean_gb_s", "std_gb_s", "gb_s"),
             Column("working_set_bytes", "span", "bytes")),
            _BW_NOTE, flag_prefix="prefetch"),
)
HEADLINES: tuple[Headline, ...] = (
    Headline("Read bandwidth (DRAM-sized)", "thread_sweep", "thread-sweep", "thread_sweep_read", read_bandwidth_figure,
             (Column("read_1_thread_gb_s", "read 1 thread", "gb_s"),
              Column("read_all_threads_gb_s", "read all threads", "gb_s"))),
    Headline("Loaded-latency knee", "loaded_latency", "loaded-latency", "inferred_loaded_latency", knee_figure),
)
