"""The storage family on a host page (fio; DiskSpd on Windows hosts): latency percentiles against queue
depth, one panel per job and direction, with fio's job table; and the summary's p99 at queue depth 1."""

from __future__ import annotations

import math

from fleetscope.report import charts
from fleetscope.report.charts import NUMBER, WHOLE, Chart, n, q, tip
from fleetscope.report.sections.section import Column, Figure, Headline, Section, SectionData
from fleetscope.units import format_bytes, format_time_ns

PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)
_COLORS = ("#1b9e77", "#66a61e", "#e6ab02", "#d95f02", "#e7298a", "#7570b3")


def _job_base(job: str | None) -> str:
    """randread_4k_qd16 -> randread_4k: the job without its queue depth, one panel for all depths."""
    head, _unused, depth = (job or "").rpartition("_qd")
    return head if head and depth.isdigit() else job or ""


def storage_chart(section: SectionData) -> dict | None:
    """Latency percentiles (log scale) vs queue depth: one panel per job pattern and direction, one line per
    percentile (50 .. 99.99; DiskSpd's other buckets are left out of the picture)."""
    time = section.units["time"]
    rows = [row for row in section.rows if row["percentile"] in PERCENTILES]
    records = [{"series": f"{'' if row['tool'] == 'fio' else row['tool'] + ' '}{_job_base(row['job'])} · {row['direction']}",
                "queue_depth": row["queue_depth"], "percentile_label": f"p{row['percentile']:g}",
                "latency": time.scaled(row["latency_ns"]), "job": row["job"], "latency_kind": row["latency_kind"]}
               for row in rows]
    charts.require_positive(records, "queue_depth", "queue depth")
    records, dropped = charts.drawable(records, "latency", log=True)
    if not records:
        return None
    depths = sorted({record["queue_depth"] for record in records})
    low, high = math.floor(math.log2(depths[0])), math.ceil(math.log2(depths[-1]))
    labels = [f"p{percentile:g}" for percentile in PERCENTILES]
    series = list(dict.fromkeys(record["series"] for record in records))
    chart = Chart().layer(records, {"type": "line", "point": True},
                          x=q("queue_depth", "queue depth",
                              scale={"type": "log", "base": 2, "domain": [2**low, 2**max(high, low + 1)]},
                              axis={"values": depths, "grid": False, "format": WHOLE}),
                          y=q("latency", f"latency ({time.symbol}, log scale)",
                              scale=charts.log_scale([record["latency"] for record in records]),
                              axis={"format": NUMBER}),
                          color=n("percentile_label", "percentile", sort=labels,
                                  scale={"domain": labels, "range": list(_COLORS)}),
                          tooltip=[tip("job", number=False), tip("queue_depth", "queue depth", whole=True),
                                   tip("percentile_label", "percentile", number=False), tip("latency", time.symbol),
                                   tip("latency_kind", "latency", number=False)])
    return chart.spec("Storage latency percentiles vs queue depth", "one panel per job and direction; fio lat "
                      "(submission to completion)" + charts.left_out(dropped, "percentiles"), height=160, width=230,
                      facet=n("series", None, sort=series, header={"title": None}), columns=3)


def p99_figure(rows: list[dict]) -> Figure:
    """p99 latency at queue depth 1 of the random read and write jobs (of every random job where the run had
    neither), one figure per job and direction."""
    pure = [row for row in rows if row["rw"] in ("randread", "randwrite")]
    if not rows:
        return Figure(None, "no random-access job ran at queue depth 1 with a 99th percentile")
    shown = pure or rows
    parts = [f"{row['direction']} {format_time_ns(row['latency_ns'])}" if pure else
             f"{row['rw']} {row['direction']} {format_time_ns(row['latency_ns'])}" for row in shown]
    sizes = {format_bytes(row["block_size_bytes"]) for row in shown if row["block_size_bytes"]}
    first = {direction: next((row["latency_ns"] for row in shown if row["direction"] == direction), None)
             for direction in ("read", "write")}
    return Figure(" · ".join(parts) + (f" ({', '.join(sorted(sizes))} random)" if sizes else ""),
                  values={"storage_p99_read_ns": first["read"], "storage_p99_write_ns": first["write"]})


SECTIONS: tuple[Section, ...] = (
    Section("storage", "fio", "Storage latency", "storage_percentiles", "storage_percentiles", storage_chart,
            note="fio on a scratch file (or an opted-in raw device), direct I/O where the filesystem accepts it; "
                 "DiskSpd on Windows hosts. On a virtual disk this measures the hypervisor's storage stack too.",
            extra_view="fio_jobs", extra_query="fio_jobs",
            extra_columns=(Column("job", "job"), Column("direction", "direction"), Column("rw", "rw"),
                           Column("block_size_bytes", "block", "bytes"), Column("iodepth", "QD", "count"),
                           Column("ioengine", "engine"), Column("direct", "direct", "bool"),
                           Column("iops", "", "iops"), Column("bandwidth_bytes_per_s", "bandwidth", "bytes_per_s"),
                           Column("lat_mean_ns", "mean", "ns"), Column("p50_ns", "p50", "ns"),
                           Column("p99_ns", "p99", "ns"), Column("p99_9_ns", "p99.9", "ns"),
                           Column("p99_99_ns", "p99.99", "ns")),
            drawn=(Column("latency_ns", "latency", "ns"),)),
)
HEADLINES: tuple[Headline, ...] = (
    Headline("Storage p99 at queue depth 1", "fio", "storage", "storage_p99_qd1", p99_figure,
             (Column("storage_p99_read_ns", "storage p99 read QD1", "ns"),
              Column("storage_p99_write_ns", "storage p99 write QD1", "ns"))),
)
