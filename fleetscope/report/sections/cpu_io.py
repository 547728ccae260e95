"""The CPU, OS and I/O family on a host page: thread throughput unpinned vs pinned (affinity), SMT
interference, and blocking reads vs POSIX AIO vs io_uring (aio)."""

from __future__ import annotations

from fleetscope.report import charts
from fleetscope.report.charts import NUMBER, WHOLE, Chart, n, q, tip
from fleetscope.report.sections.section import CORE_KIND, Column, Section, SectionData, mean_std


def affinity_chart(section: SectionData) -> dict | None:
    """Every thread's median throughput (one dot per thread and repeat) per placement, one panel per
    workload: the spread of the dots is the spread across threads and repeats; on a host with more than one
    core kind, each dot coloured by the kind(s) its thread ran on."""
    kinds = charts.core_kinds(section.rows)
    records = [{"placement": row["placement"], "workload": f"{row['workload']} ({row['unit']})",
                **charts.kind_field(kinds, row),
                "throughput": row["median_throughput"], "thread": row["thread"], "repeat": row["repeat"],
                "cpu": row["cpu"], "migrations_observed": row["migrations_observed"],
                "involuntary_context_switches": row["involuntary_context_switches"]}
               for row in section.rows if row["median_throughput"] is not None]
    if not records:
        return None
    order = ["unpinned", "pinned"]
    chart = Chart().layer(records, {"type": "point", "filled": True, "opacity": 0.7, "size": 60},
                          x=n("placement", None, sort=order, axis={"labelAngle": 0}), xOffset=n("repeat"),
                          y=q("throughput", "throughput per thread (median of its windows)", scale={"zero": False},
                              axis={"format": NUMBER}),
                          **(charts.kind_color(kinds, {"orient": "top"})
                             or {"color": n("placement", sort=order, legend=None)}),
                          tooltip=[tip("placement", number=False), tip("workload", number=False),
                                   *([tip("core kind", number=False)] if len(kinds) > 1 else []),
                                   tip("repeat", whole=True), tip("thread", whole=True), tip("cpu", number=False),
                                   tip("throughput"), tip("migrations_observed", "migrations seen", whole=True),
                                   tip("involuntary_context_switches", "involuntary switches", whole=True)])
    return chart.spec("Throughput per thread, unpinned vs pinned one per core",
                      "one dot per thread and repeat; compute in Gop/s (1e9 multiply-adds/s), memory in GB/s (1e9 B/s)"
                      + _threads_kinds_note(kinds),
                      height=220, width=260, facet=n("workload", None, header={"title": None}),
                      resolve={"scale": {"y": "independent"}})


def _threads_kinds_note(kinds: list[str]) -> str:
    if len(kinds) < 2:
        return charts.kinds_note(kinds)
    return (f"\ncolour: the core kind(s) each thread ran on ({', '.join(kinds)}); pinned threads take the fastest "
            "kind first")


def smt_chart(section: SectionData) -> dict | None:
    """Total throughput per placement, one panel per workload; on a host with more than one core kind the
    placements name their CPUs' kind(s) where those differ, and the subtitle where they do not."""
    kinds = charts.core_kinds(section.rows)
    records = [{"placement": _smt_placement(kinds, row), "workload": f"{row['workload']} ({row['unit']})",
                "total": row["total_throughput"], "speedup": row["speedup"], "cpus": row["cpus"]}
               for row in section.rows if row["total_throughput"] is not None]
    if not records:
        return None
    order = list(dict.fromkeys(_smt_placement(kinds, row) for row in sorted(
        section.rows, key=lambda row: ["alone", "siblings", "cores"].index(row["placement"])
        if row["placement"] in ("alone", "siblings", "cores") else 3)))
    # 'cores · P-core + E-core': the placement over its CPUs' kinds, one line each
    chart = Chart().layer(records, "bar", x=n("placement", None, sort=order,
                                              axis={"labelAngle": 0, **({"labelExpr": "split(datum.label, ' · ')"}
                                                                        if len(kinds) > 1 else {})}),
                          y=q("total", "total throughput (sum over threads)", axis={"format": NUMBER}),
                          color=n("placement", sort=order, legend=None),
                          tooltip=[tip("placement", number=False), tip("cpus", number=False), tip("total"),
                                   tip("speedup", "speedup over alone")])
    return chart.spec("SMT interference", "one CPU alone, two SMT siblings of one core, two cores; the kernel "
                      "reports totals per repeat, no CI" + (charts.kinds_note(kinds) if len(kinds) == 1 else ""),
                      height=220, width=260,
                      facet=n("workload", None, header={"title": None}), resolve={"scale": {"y": "independent"}})


def _smt_placement(kinds: list[str], row: dict) -> str:
    """'cores · P-core + E-core' where the placements' CPUs are of different kinds, the placement elsewhere."""
    return f"{row['placement']} · {row['core_kind']}" if len(kinds) > 1 and row.get("core_kind") else row["placement"]


def aio_chart(section: SectionData) -> dict | None:
    rate, time = section.units["rate"], section.units["time"]
    records = [{"engine": row["engine"], "queue_depth": row["queue_depth"],
                "rate": rate.scaled(row["median_mb_s"] * 1e6) if row["median_mb_s"] is not None else None,
                "ci_low": rate.scaled(row["ci95_low_mb_s"] * 1e6) if row["ci95_low_mb_s"] is not None else None,
                "ci_high": rate.scaled(row["ci95_high_mb_s"] * 1e6) if row["ci95_high_mb_s"] is not None else None,
                "iops": row["iops"], "direct": row["direct"],
                **{name: time.scaled(row[name] * 1e3) if row[name] is not None else None
                   for name in ("p50_us", "p99_us", "p99_9_us")}} for row in section.rows]
    charts.require_positive(records, "queue_depth", "queue depth")
    records, dropped = charts.drawable(records, "rate", log=False)
    if not records:
        return None
    depths = sorted({record["queue_depth"] for record in records})
    x = q("queue_depth", "queue depth (reads in flight)",
          scale={"type": "log", "base": 2, "domain": [depths[0], max(depths[-1], 2 * depths[0])]},
          axis={"values": depths, "format": WHOLE, "grid": False})
    color = n("engine", "engine", sort=["blocking", "posix_aio", "io_uring"], legend=charts.LINE_LEGEND)
    chart = Chart()
    charts.ci_band(chart, records, x=x, color=color)
    chart.layer(records, {"type": "line", "point": True}, x=x, color=color,
                y=q("rate", f"{rate.symbol}, median of windows", axis={"format": NUMBER}),
                tooltip=[tip("engine", number=False), tip("queue_depth", whole=True), tip("rate", rate.symbol),
                         tip("iops", whole=True),
                         *[tip(name, f"{label} {time.symbol}") for name, label in
                           (("p50_us", "p50"), ("p99_us", "p99"), ("p99_9_us", "p99.9"))], tip("direct", number=False)])
    return chart.spec("Reads: blocking threads vs POSIX AIO vs io_uring", "random reads of one scratch file; "
                      "blocking at depth k = k threads; band: 95% CI" + charts.left_out(dropped, "points"))


SECTIONS: tuple[Section, ...] = (
    Section("affinity", "affinity", "CPU affinity", "affinity_threads", "affinity_threads", affinity_chart,
            note="N threads of one body side by side, left to the scheduler or pinned one per physical core. "
                 "Migrations are CPU changes the threads saw between their own sched_getcpu() checks (a lower "
                 "bound); context switches are each thread's own (getrusage). perf counts cover the whole process.",
            extra_view="affinity_summary", extra_query="affinity_summary",
            extra_columns=(Column("workload", "workload"), Column("placement", "placement"), Column("unit", "unit"),
                           Column("threads", "threads", "count"),
                           Column("threads_by_core_kind", "threads per core kind", per_kind=True),
                           Column("repeats", "repeats", "count"),
                           Column("per_thread_throughput", "per thread", "number"),
                           Column("total_throughput", "total", "number"),
                           Column("thread_spread_cv", "spread across threads (CV)", "number"),
                           Column("slowest_to_fastest_thread", "slowest / fastest", "number"),
                           Column("repeat_spread_cv", "spread across repeats (CV)", "number"),
                           Column("migrations_observed", "migrations seen", "count"),
                           Column("involuntary_context_switches", "involuntary switches", "count"),
                           Column("voluntary_context_switches", "voluntary switches", "count"),
                           Column("perf_cpu_migrations", "perf cpu-migrations", "count"),
                           Column("perf_context_switches", "perf context-switches", "count"))),
    Section("smt", "smt", "SMT interference", "smt_interference", "smt_interference", smt_chart,
            (Column("workload", "workload"), Column("placement", "placement"), Column("cpus", "CPUs"),
             CORE_KIND, Column("unit", "unit"), Column("per_thread_throughput", "per thread", "number"),
             Column("total_throughput", "total", "number"), Column("speedup", "speedup over alone", "number"),
             Column("repeat_spread_cv", "spread across repeats (CV)", "number"), Column("repeats", "repeats", "count")),
            "Two threads on SMT siblings of one core share its execution units and caches; two threads on two cores "
            "do not. Hosts without SMT siblings skip this experiment and say why."),
    Section("aio", "aio", "Async vs blocking reads", "aio_curve", "aio_curve", aio_chart,
            (Column("engine", "engine"), Column("queue_depth", "QD", "count"), Column("threads", "threads", "count"),
             Column("median_mb_s", "median", "mb_s"), mean_std("mean_mb_s", "std_mb_s", "mb_s"), Column("iops", "", "iops"),
             Column("p50_us", "p50", "us"), Column("p99_us", "p99", "us"),
             Column("p99_9_us", "p99.9", "us"), Column("direct", "O_DIRECT", "bool"),
             Column("cache_dropped", "page cache dropped", "bool"), Column("file_bytes", "file", "bytes"),
             Column("filesystem", "filesystem"), Column("involuntary_context_switches", "involuntary switches", "count")),
            "Random reads of one anonymous scratch file (removed whatever happens). Latency is submission to "
            "completion (fio's lat). glibc serves POSIX AIO on helper threads, one at a time per file, so it rarely "
            "gains from depth."),
)
