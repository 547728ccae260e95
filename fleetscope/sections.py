"""The experiment sections of a host's report page: for each experiment, the warehouse view it reads,
a Vega-Lite chart built from the view's rows, and the table beside it.

Adding an experiment to the page is one `Section` in `SECTIONS` (plus its view in warehouse/views/).
Every value shown came from a measured host: the chart data goes through Jinja's `tojson`, and the
table through autoescaping templates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import altair as alt

_BYTE_UNITS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
# Vega expression turning a byte count on the x axis into a KiB/MiB/GiB label.
_BYTES_LABEL_EXPR = (
    "datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB'"
    " : datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB'"
    " : datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB'"
    " : datum.value + ' B'"
)


def format_bytes(value: object) -> str:
    """1048576 -> '1 MiB'; anything that is not an integer is shown as it is."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "" if value is None else str(value)
    for factor, unit in _BYTE_UNITS:
        if value >= factor:
            return f"{value / factor:.4g} {unit}"
    return f"{value} B"


def cache_marks(caches: list[dict]) -> list[dict]:
    """One labelled size per data/unified cache level from sysfs: L1d, L2, L3 ..."""
    marks = {}
    for cache in caches:
        if cache["type"] == "Instruction" or cache["size_bytes"] <= 0:
            continue
        label = f"L{cache['level']}d" if cache["type"] == "Data" else f"L{cache['level']}"
        marks[(label, cache["size_bytes"])] = {"label": label, "size_bytes": cache["size_bytes"]}
    return sorted(marks.values(), key=lambda mark: mark["size_bytes"])


def _log2_axis(values: list[int], field_name: str, title: str, as_bytes: bool) -> alt.X:
    low = math.floor(math.log2(min(values)))
    high = math.ceil(math.log2(max(values)))
    step = 1 if high - low <= 16 else 2
    axis = alt.Axis(values=[2**exponent for exponent in range(low, high + 1, step)], grid=False,
                    **({"labelExpr": _BYTES_LABEL_EXPR} if as_bytes else {}))
    return alt.X(f"{field_name}:Q", title=title, scale=alt.Scale(type="log", base=2, domain=[2**low, 2**high]),
                 axis=axis)


def _spec(chart: alt.TopLevelMixin, title: str, subtitle: str, height: int = 340) -> dict:
    return chart.properties(width="container", height=height, title=alt.Title(title, subtitle=subtitle)).to_dict()


def _values(rows: list[dict], keys: tuple[str, ...]) -> alt.Data:
    return alt.Data(values=[{key: row[key] for key in keys} for row in rows])


def latency_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    """The latency sweep: median per page policy with its CI band, min dashed, and a rule at each sysfs
    cache size."""
    if not rows:
        return None
    marks = cache_marks(caches)
    records = [
        {key: row[key] for key in ("working_set_bytes", "page_policy", "pattern", "median_ns", "min_ns",
                                   "ci95_low_ns", "ci95_high_ns", "median_cycles", "sample_count")}
        for row in rows
    ]
    for record in records:
        record["page_policy"] = record["page_policy"] or "unspecified"
        record["working_set"] = format_bytes(record["working_set_bytes"])
    x = _log2_axis([row["working_set_bytes"] for row in rows] + [mark["size_bytes"] for mark in marks],
                   "working_set_bytes", "working set", as_bytes=True)
    latency_scale = alt.Scale(type="log", nice=False, padding=10)
    color = alt.Color("page_policy:N", title="page policy", legend=alt.Legend(symbolType="stroke", symbolOpacity=1))
    points = alt.Chart(alt.Data(values=records))
    band = points.mark_area(opacity=0.18).encode(
        x=x, y=alt.Y("ci95_low_ns:Q", scale=latency_scale), y2="ci95_high_ns:Q", color=color
    )
    median = points.mark_line(point=True).encode(
        x=x,
        y=alt.Y("median_ns:Q", title="latency (ns, log scale)", scale=latency_scale),
        color=color,
        tooltip=[
            alt.Tooltip("working_set:N", title="working set"),
            alt.Tooltip("page_policy:N", title="page policy"),
            alt.Tooltip("pattern:N"),
            alt.Tooltip("median_ns:Q", title="median ns", format=".3f"),
            alt.Tooltip("min_ns:Q", title="min ns", format=".3f"),
            alt.Tooltip("median_cycles:Q", title="median cycles", format=".2f"),
            alt.Tooltip("sample_count:Q", title="samples"),
        ],
    )
    minimum = points.mark_line(strokeDash=[4, 3], opacity=0.8).encode(
        x=x, y=alt.Y("min_ns:Q", scale=latency_scale), color=color
    )
    layers = [band, median, minimum]
    if marks:
        rules = alt.Chart(alt.Data(values=marks)).encode(x=alt.X("size_bytes:Q"))
        layers.append(rules.mark_rule(color="#777", strokeDash=[2, 2]))
        layers.append(rules.mark_text(align="left", dx=3, baseline="top", y=2, color="#444").encode(text="label:N"))
    return _spec(alt.layer(*layers), "Load-to-use latency vs working set",
                 "solid: median with 95% CI band; dashed: minimum; grey rules: cache sizes from sysfs", height=380)


def zero_queue_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    ordered = sorted(rows, key=lambda row: (row["level"] == "DRAM", row["sysfs_size_bytes"] or 0))
    data = _values(ordered, ("level", "median_ns", "ci95_low_ns", "ci95_high_ns", "median_cycles"))
    x = alt.X("level:N", sort=[row["level"] for row in ordered], title="level")
    scale = alt.Scale(type="log", nice=False, padding=10)
    bars = alt.Chart(data).mark_bar().encode(
        x=x, y=alt.Y("median_ns:Q", title="latency (ns, log scale)", scale=scale),
        tooltip=["level:N", alt.Tooltip("median_ns:Q", format=".3f"), alt.Tooltip("median_cycles:Q", format=".1f")])
    error = alt.Chart(data).mark_rule().encode(x=x, y=alt.Y("ci95_low_ns:Q", scale=scale), y2="ci95_high_ns:Q")
    return _spec(alt.layer(bars, error), "Idle latency per level",
                 "median ns with 95% CI; working sets chosen from this host's sysfs sizes")


def pattern_stride_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = _values(rows, ("pattern", "stride_bytes", "median_ns", "footprint_capped"))
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X("stride_bytes:O", title="stride (bytes)"),
        xOffset="pattern:N",
        y=alt.Y("median_ns:Q", title="latency (ns)"),
        color=alt.Color("pattern:N", title="pattern"),
        tooltip=["pattern:N", "stride_bytes:O", alt.Tooltip("median_ns:Q", format=".2f"), "footprint_capped:N"])
    return _spec(chart, "DRAM latency by access pattern and stride",
                 "what the prefetchers hide: sequential and page-local orders vs one random cycle")


def tlb_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    records = []
    for row in rows:
        for chain, column in (("tlb", "tlb_median_ns"), ("control", "control_median_ns")):
            records.append({"pages": row["pages"], "page_size": row["page_size"], "chain": chain,
                            "median_ns": row[column], "translation_ns": row["translation_ns"]})
    x = _log2_axis([row["pages"] for row in rows], "pages", "pages touched (one line each)", as_bytes=False)
    chart = alt.Chart(alt.Data(values=records)).mark_line(point=True).encode(
        x=x, y=alt.Y("median_ns:Q", title="ns per access", scale=alt.Scale(type="log", nice=False)),
        color=alt.Color("page_size:N", title="page size"),
        strokeDash=alt.StrokeDash("chain:N", title="chain"),
        tooltip=["page_size:N", "pages:Q", "chain:N", alt.Tooltip("median_ns:Q", format=".2f"),
                 alt.Tooltip("translation_ns:Q", format=".2f")])
    return _spec(chart, "TLB reach", "solid: one line per page; dashed: control chain over the same lines packed")


def mlp_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = _values(rows, ("chains", "mlp", "ns_per_access"))
    chart = alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("chains:Q", title="interleaved chains k", scale=alt.Scale(domain=[1, 16])),
        y=alt.Y("mlp:Q", title="MLP(k) = t(1) / t(k)"),
        tooltip=["chains:Q", alt.Tooltip("mlp:Q", format=".2f"), alt.Tooltip("ns_per_access:Q", format=".2f")])
    ideal = alt.Chart(alt.Data(values=[{"chains": 1, "mlp": 1}, {"chains": 16, "mlp": 16}])).mark_line(
        strokeDash=[4, 3], color="#999").encode(x="chains:Q", y="mlp:Q")
    return _spec(alt.layer(ideal, chart), "Memory-level parallelism",
                 "grey: perfect overlap; the curve flattens where the core runs out of miss buffers")


def write_cost_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    ordered = sorted(rows, key=lambda row: (row["level"] == "DRAM", row["sysfs_size_bytes"] or 0))
    records = [{"level": row["level"], "walk": walk, "median_ns": row[column]}
               for row in ordered for walk, column in (("read", "read_ns"), ("read-modify-write", "rmw_ns"))
               if row[column] is not None]
    chart = alt.Chart(alt.Data(values=records)).mark_bar().encode(
        x=alt.X("level:N", sort=[row["level"] for row in ordered]), xOffset="walk:N",
        y=alt.Y("median_ns:Q", title="ns per access (log scale)", scale=alt.Scale(type="log", nice=False)),
        color=alt.Color("walk:N"), tooltip=["level:N", "walk:N", alt.Tooltip("median_ns:Q", format=".2f")])
    return _spec(chart, "Write cost per level", "read-only vs read-modify-write chase at the same working set")


def c2c_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = _values(rows, ("cpu_a", "cpu_b", "median_ns", "smt_siblings", "same_core", "numa_node_a", "numa_node_b"))
    chart = alt.Chart(data).mark_rect().encode(
        x=alt.X("cpu_b:O", title="responding CPU"), y=alt.Y("cpu_a:O", title="initiating CPU"),
        color=alt.Color("median_ns:Q", title="one-way ns", scale=alt.Scale(scheme="viridis")),
        tooltip=["cpu_a:O", "cpu_b:O", alt.Tooltip("median_ns:Q", format=".1f"), "smt_siblings:N", "same_core:N",
                 "numa_node_a:N", "numa_node_b:N"])
    return _spec(chart, "Core-to-core latency", "one-way ns (round trip / 2) of a cache line bounced between two CPUs",
                 height=max(200, 18 * len({row["cpu_a"] for row in rows})))


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    kind: str = "text"  # text | number | bytes | bool


@dataclass(frozen=True)
class Section:
    id: str           # HTML id prefix: <id>-chart, <id>-chart-spec, <id>-table
    experiment: str   # the experiment whose points feed it
    title: str
    view: str         # the warehouse view it reads
    order_by: str
    chart: Callable[[list[dict], list[dict]], dict | None]
    columns: tuple[Column, ...] = field(default_factory=tuple)
    note: str = ""
    extra_view: str | None = None  # a second table (e.g. write_cost's flush round trip)
    extra_columns: tuple[Column, ...] = field(default_factory=tuple)
    where: str = ""   # a filter on the view's rows, for views several sections share (bandwidth_points)


_NS = ("median_ns", "median ns", "number")
SECTIONS: tuple[Section, ...] = (
    Section("latency", "latency_sweep", "Latency curve", "latency_curve", "page_policy, working_set_bytes",
            latency_chart),
    Section("zero-queue", "zero_queue", "Idle latency per level", "zero_queue_levels",
            "level = 'DRAM', sysfs_size_bytes", zero_queue_chart,
            (Column("level", "level"), Column("sysfs_size_bytes", "sysfs size", "bytes"),
             Column("working_set_bytes", "working set", "bytes"), Column(*_NS),
             Column("ci95_low_ns", "CI95 low", "number"), Column("ci95_high_ns", "CI95 high", "number"),
             Column("median_cycles", "cycles", "number"), Column("huge_bytes_granted", "huge pages granted", "bytes"),
             Column("size_rule", "working set rule")),
            "Working sets come from this host's own sysfs cache sizes; in a VM the effective last-level "
            "cache can be far smaller than sysfs says."),
    Section("pattern-stride", "pattern_stride", "Pattern × stride latency", "pattern_stride_latency",
            "pattern, stride_bytes", pattern_stride_chart,
            (Column("pattern", "pattern"), Column("stride_bytes", "stride (B)", "number"), Column(*_NS),
             Column("min_ns", "min ns", "number"), Column("footprint_bytes", "footprint", "bytes"),
             Column("span_bytes", "span", "bytes"), Column("footprint_capped", "footprint cut by memory cap", "bool"))),
    Section("tlb", "tlb", "TLB reach", "tlb_reach", "page_size, pages", tlb_chart,
            (Column("page_size", "page size"), Column("pages", "pages", "number"),
             Column("tlb_median_ns", "TLB chain ns", "number"), Column("control_median_ns", "control ns", "number"),
             Column("translation_ns", "translation ns", "number"),
             Column("paired_difference_median_ns", "paired diff ns", "number"),
             Column("huge_granted", "huge pages granted", "bool")),
            "Huge-page grants are measured from /proc/self/smaps; in a guest the result also depends on how "
            "the hypervisor backs memory."),
    Section("mlp", "mlp", "Memory-level parallelism", "mlp_curve", "chains", mlp_chart,
            (Column("chains", "k", "number"), Column("ns_per_access", "ns per access", "number"),
             Column("mlp", "MLP(k)", "number"), Column("repeats", "repeats", "number"))),
    Section("write-cost", "write_cost", "Write cost", "write_cost_levels", "level = 'DRAM', sysfs_size_bytes",
            write_cost_chart,
            (Column("level", "level"), Column("working_set_bytes", "working set", "bytes"),
             Column("read_ns", "read ns", "number"), Column("rmw_ns", "read-modify-write ns", "number"),
             Column("rmw_extra_ns", "extra ns", "number"), Column("rmw_ratio", "ratio", "number")),
            extra_view="write_cost_flush",
            extra_columns=(Column("variant", "variant"), Column(*_NS), Column("median_cycles", "cycles", "number"),
                           Column("note", "what it is"))),
    Section("c2c", "c2c", "Core-to-core latency", "c2c_matrix", "cpu_a, cpu_b", c2c_chart,
            (Column("cpu_a", "CPU a", "number"), Column("cpu_b", "CPU b", "number"), Column(*_NS),
             Column("min_ns", "min ns", "number"), Column("smt_siblings", "SMT siblings", "bool"),
             Column("same_core", "same core", "bool"), Column("numa_node_a", "node a", "number"),
             Column("numa_node_b", "node b", "number"))),
)


# ---- storage (fio; diskspd on Windows) ------------------------------------------------------

_STORAGE_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)
_STORAGE_COLORS = ("#1b9e77", "#66a61e", "#e6ab02", "#d95f02", "#e7298a", "#7570b3")


def storage_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    """Latency percentiles (log µs) vs queue depth: one panel per job pattern and direction, one line
    per percentile (50 .. 99.99; diskspd's other buckets are left out of the picture)."""
    records = []
    for row in rows:
        if row["queue_depth"] is None or row["percentile"] not in _STORAGE_PERCENTILES or not row["latency_ns"]:
            continue
        head, _, depth = (row["job"] or "").rpartition("_qd")
        base = head if head and depth.isdigit() else row["job"] or ""
        records.append({
            "series": f"{'' if row['tool'] == 'fio' else row['tool'] + ' '}{base} · {row['direction']}",
            "queue_depth": row["queue_depth"], "percentile": row["percentile"],
            "percentile_label": f"p{row['percentile']:g}", "latency_us": row["latency_ns"] / 1000,
            "job": row["job"], "latency_kind": row["latency_kind"],
        })
    if not records:
        return None
    depths = sorted({record["queue_depth"] for record in records})
    labels = [f"p{percentile:g}" for percentile in _STORAGE_PERCENTILES]
    series = list(dict.fromkeys(record["series"] for record in records))
    low, high = math.floor(math.log2(depths[0])), math.ceil(math.log2(depths[-1]))
    x = alt.X("queue_depth:Q", title="queue depth",
              scale=alt.Scale(type="log", base=2, domain=[2**low, 2**max(high, low + 1)]),
              axis=alt.Axis(values=depths, grid=False, format="d"))
    chart = alt.Chart(alt.Data(values=records)).mark_line(point=True).encode(
        x=x,
        y=alt.Y("latency_us:Q", title="latency (µs, log scale)", scale=alt.Scale(type="log", nice=False)),
        color=alt.Color("percentile_label:N", title="percentile", sort=labels,
                        scale=alt.Scale(domain=labels, range=list(_STORAGE_COLORS))),
        tooltip=[alt.Tooltip("job:N"), alt.Tooltip("queue_depth:Q", title="queue depth"),
                 alt.Tooltip("percentile_label:N", title="percentile"),
                 alt.Tooltip("latency_us:Q", title="µs", format=".1f"), alt.Tooltip("latency_kind:N", title="latency")],
    ).properties(width=230, height=170).facet(
        facet=alt.Facet("series:N", title=None, sort=series), columns=3,
    ).properties(title=alt.Title("Storage latency percentiles vs queue depth",
                                 subtitle="one panel per job and direction; fio lat (submission to completion)"))
    return chart.to_dict()


SECTIONS = (*SECTIONS, Section(
    "storage", "fio", "Storage latency", "storage_percentiles", "job, direction, percentile", storage_chart,
    note="fio on a scratch file (or an opted-in raw device), direct I/O where the filesystem accepts it; "
         "diskspd on Windows hosts. On a virtual disk this measures the hypervisor's storage stack too.",
    extra_view="fio_jobs",
    extra_columns=(Column("job", "job"), Column("direction", "direction"), Column("rw", "rw"),
                   Column("block_size_bytes", "block", "bytes"), Column("iodepth", "QD", "number"),
                   Column("ioengine", "engine"), Column("direct", "direct", "bool"),
                   Column("iops", "IOPS", "number"), Column("bandwidth_bytes_per_s", "B/s", "number"),
                   Column("lat_mean_ns", "mean ns", "number"), Column("p50_ns", "p50 ns", "number"),
                   Column("p99_ns", "p99 ns", "number"), Column("p99_9_ns", "p99.9 ns", "number"),
                   Column("p99_99_ns", "p99.99 ns", "number")),
))


def mlc_loaded_latency_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    """MLC's loaded-latency curve: latency against the bandwidth drawn, one line per ladder, walked from
    the largest injected delay (idle) to delay 0 (full load)."""
    rows = [row for row in rows if row["bandwidth_mb_s"] is not None and row["latency_ns"] is not None]
    if not rows:
        return None
    ladders = sorted({(row["path"], row["run_index"]) for row in rows})
    records = [
        {"bandwidth_gb_s": row["bandwidth_mb_s"] / 1000, "latency_ns": row["latency_ns"],
         "delay_cycles": row["delay_cycles"], "traffic": row["traffic"] or "unspecified",
         "ladder": (row["traffic"] or "unspecified") + (
             f" ({row['path'].rsplit('/', 1)[-1]} run {row['run_index']})" if len(ladders) > 1 else ""),
         "outstanding_lines": row["outstanding_lines"], "truncated": bool(row["run_truncated"])}
        for row in rows
    ]
    chart = alt.Chart(alt.Data(values=records)).mark_line(point=True).encode(
        x=alt.X("bandwidth_gb_s:Q", title="bandwidth drawn (GB/s = 1e9 B/s)"),
        y=alt.Y("latency_ns:Q", title="loaded latency (ns)", scale=alt.Scale(zero=False)),
        color=alt.Color("ladder:N", title="load"),
        order=alt.Order("delay_cycles:Q", sort="descending"),
        tooltip=[alt.Tooltip("delay_cycles:Q", title="injected delay (cycles)"),
                 alt.Tooltip("bandwidth_gb_s:Q", title="GB/s", format=".2f"),
                 alt.Tooltip("latency_ns:Q", title="ns", format=".1f"),
                 alt.Tooltip("outstanding_lines:Q", title="lines in flight", format=".1f"),
                 alt.Tooltip("ladder:N", title="load"), alt.Tooltip("truncated:N", title="cut short")])
    return _spec(chart, "Intel MLC: loaded latency vs bandwidth",
                 "each point one injected delay; from the largest delay (idle, left) to no delay (full load)")


def mlc_bandwidth_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    order = list(dict.fromkeys(row["traffic_label"] or row["traffic"] for row in rows))
    records = [{"traffic": row["traffic_label"] or row["traffic"], "mode": row["mode"],
                "bandwidth_gb_s": row["bandwidth_mb_s"] / 1000} for row in rows]
    chart = alt.Chart(alt.Data(values=records)).mark_bar().encode(
        x=alt.X("traffic:N", sort=order, title="read-write mix"), xOffset="mode:N",
        y=alt.Y("bandwidth_gb_s:Q", title="bandwidth (GB/s = 1e9 B/s)"),
        color=alt.Color("mode:N", title="MLC mode"),
        tooltip=["traffic:N", "mode:N", alt.Tooltip("bandwidth_gb_s:Q", title="GB/s", format=".2f")])
    return _spec(chart, "Intel MLC: bandwidth per read-write mix",
                 "peak injection: load threads with no delay; max bandwidth: the best of several injection rates")


SECTIONS = (*SECTIONS, Section(
    "mlc", "mlc", "Intel MLC: idle and loaded latency", "mlc_loaded_latency",
    "path, run_index, delay_cycles DESC", mlc_loaded_latency_chart,
    (Column("delay_cycles", "injected delay (cycles)", "number"), Column("bandwidth_mb_s", "MB/s", "number"),
     Column("latency_ns", "latency ns", "number"), Column("outstanding_lines", "lines in flight", "number"),
     Column("traffic", "traffic"), Column("run_truncated", "cut short", "bool")),
    "Intel MLC as supplied by the user, run as shipped: ns and MB/s (1e6 B/s) as MLC prints them; its "
    "verbatim outputs are in the bundle's raw/mlc/. The table under the ladder is the idle latency per "
    "level, with buffers sized from this host's sysfs caches.",
    extra_view="mlc_idle_latency",
    extra_columns=(Column("level", "level"), Column("buffer_bytes", "buffer", "bytes"),
                   Column("sysfs_size_bytes", "sysfs size", "bytes"), Column("latency_ns", "idle latency ns", "number"),
                   Column("clocks", "clocks", "number"), Column("clock", "clock"), Column("access", "access"),
                   Column("buffer_rule", "buffer rule"), Column("mlc_version", "MLC"))), Section(
    "mlc-bandwidth", "mlc", "Intel MLC: bandwidth, NUMA matrices and cache-to-cache", "mlc_bandwidth",
    "mode, path, run_index, row_index", mlc_bandwidth_chart,
    (Column("mode", "mode"), Column("traffic_label", "read-write mix"), Column("bandwidth_mb_s", "MB/s", "number"),
     Column("buffer_bytes", "buffer per thread", "bytes"), Column("run_truncated", "cut short", "bool")),
    extra_view="mlc_matrix",
    extra_columns=(Column("mode", "mode"), Column("cpu_node", "CPU node", "number"),
                   Column("memory_node", "memory node", "number"), Column("scope", "c2c scope"),
                   Column("transfer_path", "c2c path"), Column("transfer", "transfer"), Column("homed_in", "homed in"),
                   Column("writer_node", "writer node", "number"), Column("reader_node", "reader node", "number"),
                   Column("latency_ns", "ns", "number"), Column("bandwidth_mb_s", "MB/s", "number"))),
)


# ---- CPU, OS and I/O: affinity, smt, aio, workloads -----------------------------------------


def affinity_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    """Every thread's median throughput (one dot per thread and repeat) per placement, one panel per
    workload: the spread of the dots is the spread across threads and repeats."""
    if not rows:
        return None
    records = [{"placement": row["placement"], "workload": f"{row['workload']} ({row['unit']})",
                "throughput": row["median_throughput"], "thread": row["thread"], "repeat": row["repeat"],
                "cpu": row["cpu"], "migrations_observed": row["migrations_observed"],
                "involuntary_context_switches": row["involuntary_context_switches"]} for row in rows]
    chart = alt.Chart(alt.Data(values=records)).mark_point(filled=True, opacity=0.7, size=60).encode(
        x=alt.X("placement:N", title=None, sort=["unpinned", "pinned"]),
        xOffset=alt.XOffset("repeat:N"),
        y=alt.Y("throughput:Q", title="throughput per thread (median of its windows)", scale=alt.Scale(zero=False)),
        color=alt.Color("placement:N", sort=["unpinned", "pinned"], legend=None),
        tooltip=["placement:N", "workload:N", "repeat:Q", "thread:Q", "cpu:N",
                 alt.Tooltip("throughput:Q", format=".3f"), alt.Tooltip("migrations_observed:Q", title="migrations seen"),
                 alt.Tooltip("involuntary_context_switches:Q", title="involuntary switches")],
    ).properties(width=260, height=240).facet(
        column=alt.Column("workload:N", title=None),
    ).resolve_scale(y="independent").properties(
        title=alt.Title("Throughput per thread, unpinned vs pinned one per core",
                        subtitle="one dot per thread and repeat; compute in Gop/s (1e9 multiply-adds/s), "
                                 "memory in GB/s (1e9 B/s)"))
    return chart.to_dict()


def smt_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    order = ["alone", "siblings", "cores"]
    records = [{"placement": row["placement"], "workload": f"{row['workload']} ({row['unit']})",
                "total": row["total_throughput"], "speedup": row["speedup"], "cpus": row["cpus"]} for row in rows]
    chart = alt.Chart(alt.Data(values=records)).mark_bar().encode(
        x=alt.X("placement:N", sort=order, title=None),
        y=alt.Y("total:Q", title="total throughput (sum over threads)"),
        color=alt.Color("placement:N", sort=order, legend=None),
        tooltip=["placement:N", "cpus:N", alt.Tooltip("total:Q", format=".3f"),
                 alt.Tooltip("speedup:Q", title="speedup over alone", format=".2f")],
    ).properties(width=260, height=240).facet(
        column=alt.Column("workload:N", title=None),
    ).resolve_scale(y="independent").properties(
        title=alt.Title("SMT interference", subtitle="one CPU alone, two SMT siblings of one core, two cores"))
    return chart.to_dict()


def aio_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = _values(rows, ("engine", "queue_depth", "median_mb_s", "ci95_low_mb_s", "ci95_high_mb_s", "iops",
                          "p50_us", "p99_us", "p99_9_us", "direct"))
    depths = sorted({row["queue_depth"] for row in rows})
    x = alt.X("queue_depth:Q", title="queue depth (reads in flight)",
              scale=alt.Scale(type="log", base=2, domain=[depths[0], max(depths[-1], 2 * depths[0])]),
              axis=alt.Axis(values=depths, format="d", grid=False))
    color = alt.Color("engine:N", title="engine", sort=["blocking", "posix_aio", "io_uring"])
    base = alt.Chart(data)
    band = base.mark_area(opacity=0.15).encode(x=x, y="ci95_low_mb_s:Q", y2="ci95_high_mb_s:Q", color=color)
    line = base.mark_line(point=True).encode(
        x=x, y=alt.Y("median_mb_s:Q", title="MB/s (1e6 B/s), median of windows"), color=color,
        tooltip=["engine:N", "queue_depth:Q", alt.Tooltip("median_mb_s:Q", format=".1f"),
                 alt.Tooltip("iops:Q", format=".0f"), alt.Tooltip("p50_us:Q", title="p50 µs", format=".1f"),
                 alt.Tooltip("p99_us:Q", title="p99 µs", format=".1f"),
                 alt.Tooltip("p99_9_us:Q", title="p99.9 µs", format=".1f"), "direct:N"])
    return _spec(alt.layer(band, line), "Reads: blocking threads vs POSIX AIO vs io_uring",
                 "random reads of one scratch file; blocking at depth k = k threads; band: 95% CI")


def workloads_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    rows = [row for row in rows if row["wall_median_s"] is not None]
    if not rows:
        return None
    data = _values(rows, ("workload", "wall_median_s", "classification", "counter_tier", "ipc"))
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X("wall_median_s:Q", title="wall time (s, median of runs)"),
        y=alt.Y("workload:N", title=None),
        color=alt.Color("classification:N", title="classification"),
        tooltip=["workload:N", alt.Tooltip("wall_median_s:Q", format=".3f"), "classification:N", "counter_tier:N",
                 alt.Tooltip("ipc:Q", format=".2f")])
    return _spec(chart, "Workloads", "wall time per run; colour: where it stalls, as far as this host's counters tell",
                 height=max(120, 28 * len(rows)))


SECTIONS = (*SECTIONS, Section(
    "affinity", "affinity", "CPU affinity", "affinity_threads", "workload, placement, repeat, thread",
    affinity_chart,
    note="N threads of one body side by side, left to the scheduler or pinned one per physical core. Migrations "
         "are CPU changes the threads saw between their own sched_getcpu() checks (a lower bound); context "
         "switches are each thread's own (getrusage). perf counts cover the whole process.",
    extra_view="affinity_summary",
    extra_columns=(Column("workload", "workload"), Column("placement", "placement"), Column("unit", "unit"),
                   Column("threads", "threads", "number"), Column("repeats", "repeats", "number"),
                   Column("per_thread_throughput", "per thread", "number"),
                   Column("total_throughput", "total", "number"),
                   Column("thread_spread_cv", "spread across threads (CV)", "number"),
                   Column("slowest_to_fastest_thread", "slowest / fastest", "number"),
                   Column("repeat_spread_cv", "spread across repeats (CV)", "number"),
                   Column("migrations_observed", "migrations seen", "number"),
                   Column("involuntary_context_switches", "involuntary switches", "number"),
                   Column("voluntary_context_switches", "voluntary switches", "number"),
                   Column("perf_cpu_migrations", "perf cpu-migrations", "number"),
                   Column("perf_context_switches", "perf context-switches", "number")),
), Section(
    "smt", "smt", "SMT interference", "smt_interference", "workload, placement", smt_chart,
    (Column("workload", "workload"), Column("placement", "placement"), Column("cpus", "CPUs"),
     Column("unit", "unit"), Column("per_thread_throughput", "per thread", "number"),
     Column("total_throughput", "total", "number"), Column("speedup", "speedup over alone", "number"),
     Column("repeat_spread_cv", "spread across repeats (CV)", "number"), Column("repeats", "repeats", "number")),
    "Two threads on SMT siblings of one core share its execution units and caches; two threads on two cores "
    "do not. Hosts without SMT siblings skip this experiment and say why.",
), Section(
    "aio", "aio", "Async vs blocking reads", "aio_curve", "engine, queue_depth", aio_chart,
    (Column("engine", "engine"), Column("queue_depth", "QD", "number"), Column("threads", "threads", "number"),
     Column("median_mb_s", "MB/s", "number"), Column("iops", "IOPS", "number"),
     Column("p50_us", "p50 µs", "number"), Column("p99_us", "p99 µs", "number"),
     Column("p99_9_us", "p99.9 µs", "number"), Column("direct", "O_DIRECT", "bool"),
     Column("cache_dropped", "page cache dropped", "bool"), Column("file_bytes", "file", "bytes"),
     Column("filesystem", "filesystem"), Column("involuntary_context_switches", "involuntary switches", "number")),
    "Random reads of one anonymous scratch file (removed whatever happens). Latency is submission to completion "
    "(fio's lat). glibc serves POSIX AIO on helper threads, one at a time per file, so it rarely gains from depth.",
), Section(
    "workloads", "workloads", "Workloads", "workload_profile", "workload", workloads_chart,
    (Column("workload", "workload"), Column("status", "status"), Column("runs", "runs", "number"),
     Column("wall_median_s", "wall s", "number"), Column("user_median_s", "user s", "number"),
     Column("sys_median_s", "system s", "number"), Column("counter_tier", "counter tier"),
     Column("ipc", "IPC", "number"), Column("cache_mpki", "cache MPKI", "number"),
     Column("l1d_miss_rate", "L1d miss rate", "number"), Column("dtlb_mpki", "dTLB MPKI", "number"),
     Column("itlb_mpki", "iTLB MPKI", "number"), Column("branch_miss_rate", "branch miss rate", "number"),
     Column("context_switches", "context switches", "number"), Column("cpu_migrations", "migrations", "number"),
     Column("classification", "classification"), Column("evidence", "evidence")),
    "Your fleet_workloads, each timed and counted under perf stat. The classification says which counter tier "
    "it rests on; where the host's perf counts only software events it is 'unclassified: counters unavailable'.",
))


# ---- the bandwidth family (issue 4) -------------------------------------------------------------------

def _variant(row: dict) -> str:
    """read / copy (nt) / mix 7:3 (regular): one legend entry per op and store."""
    name = f"mix {row['read_lines']}:{row['write_lines']}" if row["op"] == "mix" else row["op"]
    return name if row["store"] in (None, "none") else f"{name} ({row['store']})"


def bandwidth_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    """GB/s vs working set per op and store, with a rule at each sysfs cache size."""
    if not rows:
        return None
    marks = cache_marks(caches)
    records = [{"working_set_bytes": row["working_set_bytes"], "variant": _variant(row), "isa": row["isa"],
                "median_gb_s": row["median_gb_s"], "working_set": format_bytes(row["working_set_bytes"])}
               for row in rows]
    x = _log2_axis([row["working_set_bytes"] for row in rows] + [mark["size_bytes"] for mark in marks],
                   "working_set_bytes", "working set per thread", as_bytes=True)
    lines = alt.Chart(alt.Data(values=records)).mark_line(point=True).encode(
        x=x, y=alt.Y("median_gb_s:Q", title="GB/s (1e9 B/s, lines moved)"),
        color=alt.Color("variant:N", title="op (stores)"),
        tooltip=["variant:N", "working_set:N", "isa:N", alt.Tooltip("median_gb_s:Q", format=".2f")])
    layers = [lines]
    if marks:
        rules = alt.Chart(alt.Data(values=marks)).encode(x=alt.X("size_bytes:Q"))
        layers.append(rules.mark_rule(color="#777", strokeDash=[2, 2]))
        layers.append(rules.mark_text(align="left", dx=3, baseline="top", y=2, color="#444").encode(text="label:N"))
    return _spec(alt.layer(*layers), "Bandwidth vs working set",
                 "median GB/s per op and store kind; grey rules: cache sizes from sysfs", height=380)


def _bar_chart(rows: list[dict], x: str, x_title: str, group: str, group_title: str, title: str,
               subtitle: str) -> dict | None:
    if not rows:
        return None
    data = alt.Data(values=[{x: row[x], group: row[group], "median_gb_s": row["median_gb_s"]} for row in rows])
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X(f"{x}:O", title=x_title), xOffset=f"{group}:N",
        y=alt.Y("median_gb_s:Q", title="GB/s"), color=alt.Color(f"{group}:N", title=group_title),
        tooltip=[f"{x}:O", f"{group}:N", alt.Tooltip("median_gb_s:Q", format=".2f")])
    return _spec(chart, title, subtitle)


def stride_bandwidth_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    return _bar_chart(rows, "stride_bytes", "stride (bytes)", "pattern", "order",
                      "Read bandwidth by order and stride (DRAM-sized)",
                      "each block moves one 64 B line: GB/s counts lines, not stride bytes")


def rw_mix_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    return _bar_chart(rows, "read_percent", "read % of lines", "store", "stores",
                      "Bandwidth by read/write mix (DRAM-sized)",
                      "exact ratios by construction; write-allocate reads of regular stores not counted")


def thread_sweep_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = alt.Data(values=[{"threads": row["threads"], "variant": _variant(row), "median_gb_s": row["median_gb_s"],
                             "smt": "SMT siblings in use" if row["smt_siblings_used"] else "one per core"}
                            for row in rows])
    chart = alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("threads:Q", title="threads", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("median_gb_s:Q", title="GB/s, all threads"), color=alt.Color("variant:N", title="op"),
        shape=alt.Shape("smt:N", title="placement"),
        tooltip=["threads:Q", "variant:N", "smt:N", alt.Tooltip("median_gb_s:Q", format=".2f")])
    return _spec(chart, "Bandwidth vs threads (DRAM-sized, one buffer per thread)",
                 "threads go one per physical core first, then onto SMT siblings")


def loaded_latency_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = alt.Data(values=[{key: row[key] for key in ("traffic", "delay", "bandwidth_gb_s", "latency_ns",
                                                        "outstanding_lines")} for row in rows])
    chart = alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("bandwidth_gb_s:Q", title="load bandwidth (GB/s)"),
        y=alt.Y("latency_ns:Q", title="chase latency (ns)"), color=alt.Color("traffic:N", title="traffic (r:w)"),
        order="bandwidth_gb_s:Q",
        tooltip=["traffic:N", "delay:Q", alt.Tooltip("bandwidth_gb_s:Q", format=".2f"),
                 alt.Tooltip("latency_ns:Q", format=".1f"), alt.Tooltip("outstanding_lines:Q", format=".1f")])
    return _spec(chart, "Loaded latency: throughput vs latency",
                 "one chase thread while load threads run with an injected delay; the idle point has no load")


def saxpy_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = alt.Data(values=[{key: row[key] for key in ("stride_elements", "ns_per_update", "slowdown_vs_stride1",
                                                        "effective_gb_s")} for row in rows])
    chart = alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("stride_elements:Q", title="stride (8-byte elements)", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("ns_per_update:Q", title="ns per update"),
        tooltip=["stride_elements:Q", alt.Tooltip("ns_per_update:Q", format=".2f"),
                 alt.Tooltip("slowdown_vs_stride1:Q", format=".2f"), alt.Tooltip("effective_gb_s:Q", format=".2f")])
    return _spec(chart, "SAXPY: the cost of a cache miss at constant work",
                 "every element updated once per pass at every stride; past 8 elements each update fetches new lines")


def prefetch_chart(rows: list[dict], caches: list[dict]) -> dict | None:
    if not rows:
        return None
    data = alt.Data(values=[{"stride_bytes": row["stride_bytes"], "median_gb_s": row["median_gb_s"],
                             "variant": f"{row['prefetch']} / hw {row['hw_prefetchers']}"} for row in rows])
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X("stride_bytes:O", title="stride (bytes)"), xOffset="variant:N",
        y=alt.Y("median_gb_s:Q", title="GB/s (lines moved)"),
        color=alt.Color("variant:N", title="software prefetch / hardware"),
        tooltip=["stride_bytes:O", "variant:N", alt.Tooltip("median_gb_s:Q", format=".2f")])
    return _spec(chart, "Prefetcher effect (DRAM-sized reads)",
                 "stride 64: the stream prefetchers can follow; 4096: every block is a new page")


_BW = (Column("op", "op"), Column("store", "stores"), Column("pattern", "order"),
       Column("stride_bytes", "stride", "bytes"), Column("working_set_bytes", "working set", "bytes"),
       Column("threads", "threads", "number"), Column("isa", "ISA"), Column("median_gb_s", "median GB/s", "number"),
       Column("ci95_low_gb_s", "CI95 low", "number"), Column("ci95_high_gb_s", "CI95 high", "number"),
       Column("bytes_per_pass", "bytes / pass", "bytes"),
       Column("write_allocate_bytes_per_pass", "write-allocate / pass", "bytes"))
_BW_NOTE = ("GB/s = 1e9 bytes/s counted in 64-byte lines moved (a strided block moves one line, never the "
            "stride); reads for ownership of regular stores are not counted, as in STREAM.")

SECTIONS = (*SECTIONS, Section(
    "bandwidth", "bandwidth", "Bandwidth vs working set", "bandwidth_points", "op, store, working_set_bytes",
    bandwidth_chart, _BW, _BW_NOTE, where="experiment = 'bandwidth'",
), Section(
    "stride-bandwidth", "stride_bandwidth", "Pattern × stride bandwidth", "bandwidth_points",
    "pattern, stride_bytes", stride_bandwidth_chart, _BW, _BW_NOTE, where="experiment = 'stride_bandwidth'",
), Section(
    "rw-mix", "rw_mix", "Read/write mix", "bandwidth_points", "read_percent DESC, store", rw_mix_chart,
    (Column("read_percent", "read %", "number"), Column("read_lines", "reads / group", "number"),
     Column("write_lines", "writes / group", "number"), *_BW[1:]), _BW_NOTE, where="experiment = 'rw_mix'",
), Section(
    "thread-sweep", "thread_sweep", "Thread-intensity sweep", "bandwidth_points", "op, threads",
    thread_sweep_chart, (Column("cpus", "CPUs"), Column("smt_siblings_used", "SMT siblings used", "bool"), *_BW),
    "Each thread streams through a DRAM-sized buffer of its own. The saturation point is the fewest threads "
    "reaching 95% of the peak.", where="experiment = 'thread_sweep'", extra_view="thread_saturation",
    extra_columns=(Column("op", "op"), Column("store", "stores"),
                   Column("single_thread_gb_s", "1 thread GB/s", "number"), Column("peak_gb_s", "peak GB/s", "number"),
                   Column("peak_threads", "at threads", "number"),
                   Column("saturation_threads", "saturation (95% of peak)", "number"),
                   Column("smt_from_threads", "SMT siblings from", "number")),
), Section(
    "loaded-latency", "loaded_latency", "Loaded latency", "loaded_latency_curve", "traffic, delay DESC NULLS FIRST",
    loaded_latency_chart,
    (Column("traffic", "traffic"), Column("delay", "delay", "number"), Column("load_threads", "load threads", "number"),
     Column("bandwidth_gb_s", "GB/s", "number"), Column("latency_ns", "latency ns", "number"),
     Column("latency_min_ns", "min ns", "number"), Column("outstanding_lines", "lines in flight", "number")),
    "Delays are spin iterations after each group of lines, so they are not comparable across hosts; the "
    "(bandwidth, latency) pairs are. Lines in flight by Little's law: bandwidth / 64 B × latency.",
), Section(
    "saxpy", "saxpy", "SAXPY cache-miss impact", "saxpy_stride", "stride_elements", saxpy_chart,
    (Column("stride_elements", "stride (elements)", "number"), Column("ns_per_update", "ns / update", "number"),
     Column("slowdown_vs_stride1", "vs stride 1", "number"), Column("effective_gb_s", "GB/s of line visits", "number"),
     Column("line_visits_per_pass", "line visits / pass", "number"), Column("array_bytes", "each array", "bytes")),
    "Constant work: every element is updated once per pass at every stride. Counters are per stride process; "
    "where the PMU cannot count an event its state says so and no value is shown.",
    extra_view="saxpy_counters",
    extra_columns=(Column("stride_elements", "stride", "number"), Column("event", "event"), Column("state", "state"),
                   Column("value", "count", "number"), Column("per_update", "per update", "number")),
), Section(
    "prefetch", "prefetch", "Prefetcher effect", "bandwidth_points", "hw_prefetchers, stride_bytes, prefetch",
    prefetch_chart,
    (Column("stride_bytes", "stride", "bytes"), Column("prefetch", "software prefetch"),
     Column("prefetch_distance_blocks", "distance (blocks)", "number"), Column("hw_prefetchers", "hardware"),
     Column("median_gb_s", "median GB/s", "number"), Column("working_set_bytes", "span", "bytes")),
    _BW_NOTE, where="experiment IN ('prefetch', 'prefetch_hw_off')",
))
