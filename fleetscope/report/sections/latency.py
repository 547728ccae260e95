"""The latency family on a host page: the latency curve with the inferred levels marked, idle latency per
level, pattern × stride, TLB reach, memory-level parallelism, write cost and core-to-core latency; and
the summary's TLB and MLP figures."""

from __future__ import annotations

import math

from fleetscope.report import charts
from fleetscope.report.charts import NUMBER, Chart, n, o, q, tip
from fleetscope.report.sections.section import CORE_KIND, Column, Figure, Headline, Section, SectionData, mean_std
from fleetscope.units import format_bytes, format_number, format_time_ns


def _level_order(rows: list[dict]) -> list[str]:
    ordered = sorted(rows, key=lambda row: (row["level"] == "DRAM", row["sysfs_size_bytes"] or 0))
    return list(dict.fromkeys(row["level"] for row in ordered))


def latency_chart(section: SectionData) -> dict | None:
    """Median per page policy (and core kind, on a host with several) with its CI band, minimum dashed; grey
    rules at the sysfs cache sizes and the inferred levels (effective size, with the band of the rise after
    each level)."""
    time = section.units["time"]
    kinds = charts.core_kinds(section.rows)
    records = [{"working_set_bytes": row["working_set_bytes"],
                "page_policy": charts.kind_series(kinds, row, row["page_policy"] or "unspecified"),
                "median": time.scaled(row["median_ns"]), "minimum": time.scaled(row["min_ns"]),
                "ci_low": time.scaled(row["ci95_low_ns"]), "ci_high": time.scaled(row["ci95_high_ns"]),
                "median_cycles": row["median_cycles"], "samples": row["sample_count"],
                "working_set": format_bytes(row["working_set_bytes"])} for row in section.rows]
    charts.require_positive(records, "working_set_bytes", "working set")
    records, dropped = charts.drawable(records, "median", "minimum", "ci_low", "ci_high", log=True)
    if not records:
        return None
    marks = charts.cache_marks(section.caches)
    levels = charts.one_policy(section.derived.get("inferred_levels", []))
    x = charts.log2_axis([record["working_set_bytes"] for record in records] + [mark["size_bytes"] for mark in marks],
                         "working_set_bytes", "working set", as_bytes=True)
    scale = charts.log_scale([record[key] for record in records for key in ("minimum", "ci_high")])
    # 'kind · policy': a longer legend title is cut at the page's width
    color = n("page_policy", "kind · policy" if len(kinds) > 1 else "page policy", legend=charts.LINE_LEGEND,
              **charts.kind_sort(kinds, records, "page_policy"))
    chart = Chart()
    points = chart.data(records)
    chart.layer(points, {"type": "area", "opacity": 0.18}, x=x, y=q("ci_low", scale=scale), y2={"field": "ci_high"},
                color=color)
    chart.layer(points, {"type": "line", "point": True}, x=x, color=color,
                y=q("median", f"latency ({time.symbol}, log scale)", scale=scale, axis={"format": NUMBER}),
                tooltip=[tip("working_set", "working set", number=False),
                         tip("page_policy", charts.kind_title(kinds, "page policy"), number=False),
                         tip("median", f"median {time.symbol}"), tip("minimum", f"min {time.symbol}"),
                         tip("median_cycles", "median cycles"), tip("samples", "samples", whole=True)])
    chart.layer(points, {"type": "line", "strokeDash": [4, 3], "opacity": 0.8}, x=x, y=q("minimum", scale=scale),
                color=color)
    charts.sysfs_rules(chart, marks)
    charts.level_marks(chart, levels)
    policy = f" ({levels[0]['page_policy']} pages)" if levels else ""
    if any(level.get("relative_to_l1") for level in section.derived.get("inferred_levels", [])):
        # a relative curve (tinymembench): its values are the extra time over an L1 hit, not a latency
        chart.layers[1]["encoding"]["y"]["title"] = f"extra time over an L1 hit ({time.symbol}, log scale)"
        return chart.spec("Latency over L1 vs working set (a relative curve)",
                          "as the source gives it: ns on top of an L1 hit (its L1 region reads 0 and is left off the "
                          "log scale); grey: the CPU's published cache sizes; orange: the levels fleetscope inferred"
                          + charts.left_out(dropped, "points"), height=340)
    return chart.spec("Load-to-use latency vs working set",
                      "median with 95% CI band, minimum dashed; grey: sysfs cache sizes; orange: the levels "
                      f"fleetscope inferred{policy}, band = the rise after each level"
                      + charts.kinds_note(kinds, sysfs_rules=True) + charts.left_out(dropped, "points"), height=340)


def _dots_per_level(records: list[dict], order: list[str], group: str | None, y_title: str, title: str,
                    subtitle: str, kinds: list[str]) -> dict | None:
    """Per-level latencies as dots on a log scale (bars on a log scale have no baseline), CI as error bars."""
    records, dropped = charts.drawable(records, "value", log=True)
    if not records:
        return None
    scale = charts.log_scale([record["value"] for record in records]
                             + [record["ci_high"] for record in records if record.get("ci_high")]
                             + [record["ci_low"] for record in records if record.get("ci_low")])
    x = n("level", "level", sort=order, axis={"labelAngle": 0})
    y = q("value", y_title, scale=scale, axis={"format": NUMBER})
    offset = {"xOffset": n(group, **charts.kind_sort(kinds, records, group))} if group else {}
    chart = Chart()
    data = chart.data(records)
    chart.layer(data, {"type": "point", "filled": True, "size": 90, "opacity": 1}, x=x, y=y,
                **({"color": n(group, "", legend={"orient": "top"}, **charts.kind_sort(kinds, records, group))}
                   if group else {}), **offset,
                tooltip=[tip("level", number=False), *([tip(group, number=False)] if group else []), tip("value"),
                         tip("cycles")])
    chart.layer(data, {"type": "text", "align": "left", "dx": 8, "fontSize": 11}, x=x, y=y,
                text=q("value", format=NUMBER), **offset)
    with_ci = [record for record in records if record.get("ci_low") and record.get("ci_high")]
    if with_ci:
        chart.layer(with_ci, {"type": "rule", "color": "#222"}, x=x, y=q("ci_low", scale=scale),
                    y2={"field": "ci_high"}, **offset)
    return chart.spec(title, subtitle + charts.left_out(dropped, "levels"), height=260)


def zero_queue_chart(section: SectionData) -> dict | None:
    """Per level; on a host with more than one core kind (P/E cores, big.LITTLE), each kind's side by side."""
    time = section.units["time"]
    kinds = charts.core_kinds(section.rows)
    records = [{"level": row["level"], "value": time.scaled(row["median_ns"]), "ci_low": time.scaled(row["ci95_low_ns"]),
                "ci_high": time.scaled(row["ci95_high_ns"]), "cycles": row["median_cycles"],
                **charts.kind_field(kinds, row)} for row in section.rows]
    return _dots_per_level(records, _level_order(section.rows), charts.kind_title(kinds),
                           f"latency ({time.symbol}, log scale)", "Idle latency per level",
                           "median with 95% CI; working sets chosen from " + (
                               f"each core kind's own sysfs sizes ({', '.join(kinds)})" if len(kinds) > 1
                               else "this host's sysfs sizes" + charts.kinds_note(kinds)), kinds)


def write_cost_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    kinds = charts.core_kinds(section.rows)
    records = [{"level": row["level"], "walk": charts.kind_series(kinds, row, walk), "value": time.scaled(row[column]),
                "cycles": None}
               for row in section.rows for walk, column in (("read", "read_ns"), ("read-modify-write", "rmw_ns"))]
    return _dots_per_level(records, _level_order(section.rows), "walk", f"per access ({time.symbol}, log scale)",
                           "Write cost per level", "read-only vs read-modify-write chase at the same working set"
                           + charts.kinds_note(kinds), kinds)


def pattern_stride_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    if not section.rows:
        return None
    # A working-set grid (kernels_pattern_stride_footprints) gives each footprint bars of its own.
    footprints = len({row["footprint_bytes"] for row in section.rows}) > 1
    records = [{"pattern": f"{row['pattern']}, {format_bytes(row['footprint_bytes'])}" if footprints else row["pattern"],
                "stride": row["stride_bytes"], "median": time.scaled(row["median_ns"]),
                "ci_low": time.scaled(row["ci95_low_ns"]), "ci_high": time.scaled(row["ci95_high_ns"])}
               for row in section.rows]
    threads = sorted({row.get("threads") or 1 for row in section.rows})
    strides = sorted({record["stride"] for record in records if record["stride"] is not None})
    chart = Chart()
    charts.bars_with_ci(chart, records, x="stride", x_title="stride (bytes)", y="median",
                        y_title=f"latency ({time.symbol})", low="ci_low", high="ci_high", group="pattern",
                        group_title="pattern", sort=strides,
                        tooltip=[tip("pattern", number=False), tip("stride", whole=True), tip("median", time.symbol)])
    loaded = f"; {', '.join(map(str, threads))} threads chasing at once" if threads != [1] else ""
    return chart.spec("DRAM latency by access pattern and stride", "median with 95% CI; what the prefetchers hide: "
                      "sequential and page-local orders vs one random cycle" + loaded)


# The TLB sweep's two chains, as the chart's dash legend names them: solid and dashed, in this order.
_TLB_CHAIN, _CONTROL_CHAIN = "one line per page", "control chain"


def tlb_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    kinds = charts.core_kinds(section.rows)
    records = [{"pages": row["pages"], "page_size": charts.kind_series(kinds, row, row["page_size"]), "chain": chain,
                "value": time.scaled(row[column]),
                "translation": time.scaled(row["translation_ns"])}
               for row in section.rows for chain, column in ((_TLB_CHAIN, "tlb_median_ns"),
                                                             (_CONTROL_CHAIN, "control_median_ns"))
               if chain != _CONTROL_CHAIN or row["control_median_ns"] is not None]  # a published curve has no control
    charts.require_positive(records, "pages", "page count")
    records, dropped = charts.drawable(records, "value", log=True)
    if not records:
        return None
    x = charts.log2_axis([record["pages"] for record in records], "pages", "pages touched (one line each)",
                         as_bytes=False)
    chart = Chart()
    chart.layer(records, {"type": "line", "point": True}, x=x,
                y=q("value", f"per access ({time.symbol}, log scale)",
                    scale=charts.log_scale([record["value"] for record in records]), axis={"format": NUMBER}),
                color=n("page_size", charts.kind_title(kinds, "page size"),
                        **charts.kind_sort(kinds, records, "page_size")),
                strokeDash=n("chain", "chain", scale={"domain": [_TLB_CHAIN, _CONTROL_CHAIN],
                                                      "range": [charts.SOLID, charts.DASHED]},
                             legend=charts.DASH_LEGEND),
                tooltip=[tip("page_size", charts.kind_title(kinds, "page size"), number=False),
                         tip("pages", whole=True), tip("chain", number=False),
                         tip("value", time.symbol), tip("translation", f"translation {time.symbol}")])
    lowest, highest = min(record["pages"] for record in records), max(record["pages"] for record in records)
    reach = [{"pages": row[f"{key}_entries"] or math.sqrt(row[f"{key}_low_pages"] * row[f"{key}_high_pages"]),
              "label": f"{row['page_size']} {name} {row[f'{key}_text']}"}
             for row in charts.fastest_kind(section.derived.get("inferred_tlb", []))
             for key, name in (("l1", "L1 TLB"), ("l2", "L2 TLB"))
             if row.get(f"{key}_low_pages") and lowest <= row[f"{key}_low_pages"] <= highest]
    if reach:
        chart.layer(reach, {"type": "rule", "color": charts.LEVEL_COLOR, "opacity": 0.7}, x=q("pages"))
        charts.bottom_labels(chart, reach, "pages", charts.LEVEL_COLOR)
    return chart.spec("TLB reach", f"solid: {_TLB_CHAIN}; dashed: {_CONTROL_CHAIN} (the same lines packed into "
                      "few pages); orange: inferred TLB entries" + charts.kinds_note(kinds)
                      + charts.left_out(dropped, "points"))


def mlp_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    records = [{"chains": row["chains"], "mlp": row["mlp"], "per_access": time.scaled(row["ns_per_access"])}
               for row in section.rows if row["chains"] is not None and row["mlp"] is not None]
    if not records:
        return None
    most = max(record["chains"] for record in records)
    x = q("chains", "interleaved chains k", scale={"domain": [1, most]},
          axis=charts.whole_axis([record["chains"] for record in records]))
    chart = Chart()
    chart.layer([{"chains": 1, "mlp": 1}, {"chains": most, "mlp": most}],
                {"type": "line", "strokeDash": [4, 3], "color": "#999"}, x=x, y=q("mlp"))
    chart.layer(records, {"type": "line", "point": True}, x=x, y=q("mlp", "MLP(k) = t(1) / t(k)"),
                tooltip=[tip("chains", whole=True), tip("mlp"), tip("per_access", f"per access ({time.symbol})")])
    return chart.spec("Memory-level parallelism",
                      "grey: perfect overlap; the curve flattens where the core runs out of miss buffers")


# The c2c matrix writes each pair's latency in its cell up to this many CPUs (beyond, the cells are too small).
_C2C_LABELLED_CPUS = 16


def c2c_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    records = [{"cpu_a": row["cpu_a"], "cpu_b": row["cpu_b"], "median": time.scaled(row["median_ns"]),
                "smt_siblings": row["smt_siblings"], "same_core": row["same_core"], "numa_node_a": row["numa_node_a"],
                "numa_node_b": row["numa_node_b"]} for row in section.rows if row["median_ns"] is not None]
    if not records:
        return None
    chart = Chart()
    cpus = {record["cpu_a"] for record in records} | {record["cpu_b"] for record in records}
    charts.heat_map(chart, chart.data(records), x=o("cpu_b", "responding CPU", axis={"labelAngle": 0}),
                    y=o("cpu_a", "initiating CPU"), field="median", title=f"one-way {time.symbol}",
                    values=[record["median"] for record in records], labels=len(cpus) <= _C2C_LABELLED_CPUS,
                    tooltip=[tip("cpu_a", whole=True), tip("cpu_b", whole=True),
                             tip("median", f"one-way {time.symbol}"), tip("smt_siblings", number=False),
                             tip("same_core", number=False), tip("numa_node_a", number=False),
                             tip("numa_node_b", number=False)])
    return chart.spec("Core-to-core latency", "one-way latency (round trip / 2) of a cache line bounced between two "
                      f"CPUs; colours span at least {charts.HEAT_MIN_SPAN:.0%} of the largest value",
                      height=max(160, 18 * len({record["cpu_a"] for record in records})))


def c2c_domain_chart(section: SectionData) -> dict | None:
    """Median one-way latency per pair of LLC domains: the diagonal within a domain, the rest across."""
    time = section.units["time"]
    records = [{"domain_a": row["llc_domain_a"], "domain_b": row["llc_domain_b"], "first_a": row["first_cpu_a"],
                "median": time.scaled(row["median_ns"]), "pairs": row["pairs"],
                "where": "within" if row["same_domain"] else "across"}
               for row in section.rows if row["median_ns"] is not None]
    if not records:
        return None
    order = [domain for _unused, domain in sorted({(record["first_a"], record["domain_a"]) for record in records})]
    chart = Chart()
    x = o("domain_b", "responding CPUs' LLC domain", sort=order, axis={"labelAngle": 0})
    y = o("domain_a", "initiating CPUs' LLC domain", sort=order)
    charts.heat_map(chart, chart.data(records), x=x, y=y, field="median", title=f"one-way {time.symbol}",
                    values=[record["median"] for record in records], labels=True,
                    tooltip=[tip("domain_a", "initiating domain", number=False),
                             tip("domain_b", "responding domain", number=False),
                             tip("where", number=False), tip("median", f"median {time.symbol}"),
                             tip("pairs", "CPU pairs", whole=True)])
    return chart.spec("Core-to-core latency by LLC domain", "median of the CPU pairs' one-way latencies; the "
                      "diagonal within a domain, the rest across", height=max(120, 40 * len(order)))


def _numa_heat_map(records: list[dict], legend: str, title: str, subtitle: str) -> dict | None:
    """A CPU node x memory node heat map of records {cpu_node, mem_node, value, ratio}, each cell's figure
    written on it."""
    records = [record for record in records if record["value"] is not None and record["cpu_node"] is not None
               and record["mem_node"] is not None]
    if not records:
        return None
    chart = Chart()
    x, y = o("mem_node", "memory node", axis={"labelAngle": 0}), o("cpu_node", "CPU node")
    # viridis runs from dark to light: white figures on the lighter half would not read (heat_map's labels)
    charts.heat_map(chart, chart.data(records), x=x, y=y, field="value", title=legend,
                    values=[record["value"] for record in records], labels=True,
                    tooltip=[tip("cpu_node", "CPU node", whole=True), tip("mem_node", "memory node", whole=True),
                             tip("value", f"median {legend}"), tip("ratio", "x local")])
    return chart.spec(title, subtitle, height=max(120, 40 * len({record["cpu_node"] for record in records})))


def numa_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    return _numa_heat_map([{"cpu_node": row["cpu_node"], "mem_node": row["mem_node"],
                            "value": time.scaled(row["median_ns"]), "ratio": row["ratio_to_local"]}
                           for row in section.rows], f"latency ({time.symbol})", "NUMA latency matrix",
                          "DRAM-sized chase, median; the chase on a CPU of each node, its memory bound to each node")


def numa_bandwidth_chart(section: SectionData) -> dict | None:
    rate = section.units["rate"]
    return _numa_heat_map([{"cpu_node": row["cpu_node"], "mem_node": row["mem_node"],
                            "value": None if row["median_gb_s"] is None else rate.scaled(row["median_gb_s"] * 1e9),
                            "ratio": row["ratio_to_local"]} for row in section.rows],
                          f"read ({rate.symbol})", "NUMA bandwidth matrix",
                          "read bandwidth, median; threads on the CPU node's CPUs, each buffer bound to each node")


def tlb_figure(rows: list[dict]) -> Figure:
    """L1/L2 entries and the page-walk cost with 4 KiB pages (the smallest page size measured), of the fastest
    core kind where a host has more than one (the kind is named)."""
    rows = charts.fastest_kind(rows)  # one kind's TLB, the fastest's, never a blend of two
    if not rows:
        return Figure(None, "no TLB curve was inferred")
    row = min(rows, key=lambda row: row["page_bytes"] or 0)
    # entries as the step's bracket, with the count where the bracket is narrow enough for one
    parts = [f"{name} {row[f'{key}_text']} entries" if row.get(f"{key}_low_pages") else None
             for key, name in (("l1", "L1"), ("l2", "L2"))]
    parts += [f"page walk {format_time_ns(row['walk_ns'])}" if row["walk_ns"] is not None else None]
    parts = [part for part in parts if part]
    size = format_bytes(row["page_bytes"]) if row["page_bytes"] else row["page_size"]
    kind = f", {row['core_kind']}" if row.get("core_kind") else ""
    values = {}
    for key in ("l1", "l2"):
        values.update({f"tlb_{key}_entries": row[f"{key}_entries"], f"tlb_{key}_entries_low": row.get(f"{key}_low_pages"),
                       f"tlb_{key}_entries_high": row.get(f"{key}_high_pages"),
                       f"tlb_{key}_entries_method": "onset" if row[f"{key}_entries"] is not None else None})
    return Figure(f"{'; '.join(parts)} ({size} pages{kind})" if parts else None, row["note"], values)


def mlp_figure(rows: list[dict]) -> Figure:
    if not rows or rows[0]["max_mlp"] is None:
        return Figure(None, rows[0]["note"] if rows else "no MLP curve was inferred")
    row = rows[0]
    saturation = (f", saturates at {row['saturation_chains']} chains" if row["saturation_chains"] is not None
                  else ", no saturation within the chains measured")
    return Figure(f"{format_number(row['max_mlp'])} at {row['max_mlp_chains']} chains{saturation}", row["note"],
                  {"mlp": row["max_mlp"]})


_NS = ("median_ns", "median", "ns")
_MEAN = mean_std("mean_ns", "std_ns", "ns")
_CI = (Column("ci95_low_ns", "CI95 low", "ns"), Column("ci95_high_ns", "CI95 high", "ns"))

SECTIONS: tuple[Section, ...] = (
    Section("latency", "latency_sweep", "Latency curve", "latency_curve", "latency_curve", latency_chart,
            (CORE_KIND, Column("page_policy", "page policy"), Column("working_set_bytes", "working set", "bytes"),
             Column(*_NS), _MEAN,
             Column("min_ns", "min", "ns"), *_CI, Column("median_cycles", "cycles", "number"),
             Column("huge_bytes_granted", "huge pages granted", "bytes"), Column("sample_count", "samples", "count"))),
    Section("zero-queue", "zero_queue", "Idle latency per level", "zero_queue_levels", "zero_queue_levels",
            zero_queue_chart,
            (CORE_KIND, Column("cpu", "CPU", "count"), Column("level", "level"),
             Column("sysfs_size_bytes", "sysfs size", "bytes"),
             Column("working_set_bytes", "working set", "bytes"), Column(*_NS), _MEAN, *_CI,
             Column("median_cycles", "cycles", "number"), Column("huge_bytes_granted", "huge pages granted", "bytes"),
             Column("size_rule", "working set rule")),
            "Working sets come from the measuring CPU's own sysfs cache sizes; in a VM the effective last-level "
            "cache can be far smaller than sysfs says. On a host with more than one core kind (hybrid P/E "
            "cores, Arm big.LITTLE) each kind is measured on its own CPU and shown beside the others."),
    Section("pattern-stride", "pattern_stride", "Pattern × stride latency", "pattern_stride_latency",
            "pattern_stride_latency", pattern_stride_chart,
            (Column("pattern", "pattern"), Column("stride_bytes", "stride", "bytes"), Column(*_NS), _MEAN,
             Column("min_ns", "min", "ns"), *_CI, Column("footprint_bytes", "footprint", "bytes"),
             Column("span_bytes", "span", "bytes"), Column("footprint_capped", "footprint cut by memory cap", "bool"),
             Column("threads", "threads", "count"))),
    Section("tlb", "tlb", "TLB reach", "tlb_reach", "tlb_reach", tlb_chart,
            (CORE_KIND, Column("page_size", "page size"), Column("pages", "pages", "count"),
             Column("tlb_median_ns", "TLB chain", "ns"), mean_std("tlb_mean_ns", "tlb_std_ns", "ns"),
             Column("control_median_ns", "control", "ns"),
             Column("translation_ns", "translation", "ns"),
             Column("paired_difference_median_ns", "paired difference", "ns"),
             Column("huge_granted", "huge pages granted", "bool")),
            "Huge-page grants are measured from /proc/self/smaps; in a guest the result also depends on how "
            "the hypervisor backs memory."),
    Section("mlp", "mlp", "Memory-level parallelism", "mlp_curve", "mlp_curve", mlp_chart,
            (Column("chains", "k", "count"), Column("ns_per_access", "per access", "ns"),
             Column("mlp", "MLP(k)", "number"), Column("repeats", "repeats", "count"))),
    Section("write-cost", "write_cost", "Write cost", "write_cost_levels", "write_cost_levels", write_cost_chart,
            (CORE_KIND, Column("level", "level"), Column("working_set_bytes", "working set", "bytes"),
             Column("read_ns", "read", "ns"), Column("rmw_ns", "read-modify-write", "ns"),
             Column("rmw_extra_ns", "extra", "ns"), Column("rmw_ratio", "ratio", "number")),
            extra_view="write_cost_flush", extra_query="write_cost_flush",
            extra_columns=(CORE_KIND, Column("variant", "variant"), Column(*_NS), _MEAN,
                           Column("median_cycles", "cycles", "number"),
                           Column("note", "what it is"))),
    Section("c2c", "c2c", "Core-to-core latency", "c2c_matrix", "c2c_matrix", c2c_chart,
            (Column("cpu_a", "CPU a", "count"), Column("cpu_b", "CPU b", "count"), Column(*_NS), _MEAN,
             Column("min_ns", "min", "ns"), Column("smt_siblings", "SMT siblings", "bool"),
             Column("same_core", "same core", "bool"), Column("numa_node_a", "node a", "count"),
             Column("numa_node_b", "node b", "count"))),
    Section("c2c-domains", "c2c", "Core-to-core latency within and across LLC domains", "c2c_llc_domains",
            "c2c_llc_domains", c2c_domain_chart,
            (Column("llc_domain_a", "domain a"), Column("llc_domain_b", "domain b"),
             Column("same_domain", "within", "bool"), Column("same_node", "same node", "bool"),
             Column("pairs", "pairs", "count"), Column(*_NS), Column("min_ns", "min", "ns"),
             Column("max_ns", "slowest pair", "ns")),
            "Each c2c pair labelled with the last-level-cache domain of its two CPUs (from the facts), SMT "
            "siblings left out. Shown where a host has more than one domain; the c2c notes say when it has one."),
    Section("numa-matrix", "numa_matrix", "NUMA latency matrix", "numa_latency_matrix", "numa_latency_matrix",
            numa_chart,
            (Column("cpu_node", "CPU node", "count"), Column("mem_node", "memory node", "count"),
             Column("cpu", "CPU", "count"), Column(*_NS), _MEAN, Column("min_ns", "min", "ns"), *_CI,
             Column("ratio_to_local", "× local", "number"), Column("working_set_bytes", "working set", "bytes"),
             Column("pages_on_node", "pages on node", "count"), Column("pages_sampled", "pages asked", "count")),
            "Like Intel MLC's --latency_matrix: memory bound with set_mempolicy (MPOL_BIND, no fallback). "
            "A host with one NUMA node records the experiment as skipped, with the reason."),
    Section("numa-bandwidth", "numa_matrix", "NUMA bandwidth matrix", "numa_bandwidth_matrix",
            "numa_bandwidth_matrix", numa_bandwidth_chart,
            (Column("cpu_node", "CPU node", "count"), Column("mem_node", "memory node", "count"),
             Column("threads", "threads", "count"), Column("median_gb_s", "median", "gb_s"), mean_std("mean_gb_s", "std_gb_s", "gb_s"),
             Column("ci95_low_gb_s", "CI95 low", "gb_s"), Column("ci95_high_gb_s", "CI95 high", "gb_s"),
             Column("ratio_to_local", "× local", "number"), Column("bytes_per_thread", "per thread", "bytes"),
             Column("pages_on_node", "pages on node", "count"), Column("pages_sampled", "pages asked", "count")),
            "Like Intel MLC's --bandwidth_matrix: read-only traffic from the CPU node's CPUs, memory bound with "
            "set_mempolicy (MPOL_BIND) and every sampled page checked on the node (move_pages). A host with one "
            "NUMA node records the experiment as skipped, with the reason."),
)
HEADLINES: tuple[Headline, ...] = (
    Headline("TLB", "tlb", "tlb", "inferred_tlb", tlb_figure,
             (Column("tlb_l1_entries", "TLB L1 entries", "count"), Column("tlb_l2_entries", "TLB L2 entries", "count"))),
    Headline("Memory-level parallelism", "mlp", "mlp", "inferred_mlp", mlp_figure, (Column("mlp", "MLP", "number"),)),
)
