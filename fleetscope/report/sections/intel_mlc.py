"""Intel MLC on a host page (when the user supplied it): the loaded-latency ladder with MLC's idle latency
per level under it, and the bandwidth per read-write mix with the NUMA and cache-to-cache matrices."""

from __future__ import annotations

from fleetscope.report import charts
from fleetscope.report.charts import NUMBER, Chart, n, q, tip
from fleetscope.report.sections.section import Column, Section, SectionData


def mlc_loaded_latency_chart(section: SectionData) -> dict | None:
    """Latency against the bandwidth drawn, one line per ladder, walked from the largest injected delay
    (idle) to delay 0 (full load)."""
    time, rate = section.units["time"], section.units["rate"]
    rows = [row for row in section.rows if row["bandwidth_mb_s"] is not None and row["latency_ns"] is not None]
    if not rows:
        return None
    ladders = sorted({(row["path"], row["run_index"]) for row in rows})
    records = [
        {"rate": rate.scaled(row["bandwidth_mb_s"] * 1e6), "latency": time.scaled(row["latency_ns"]),
         "delay_cycles": row["delay_cycles"], "outstanding_lines": row["outstanding_lines"],
         "ladder": (row["traffic"] or "unspecified") + (
             f" ({row['path'].rsplit('/', 1)[-1]} run {row['run_index']})" if len(ladders) > 1 else ""),
         "truncated": bool(row["run_truncated"])}
        for row in rows
    ]
    chart = Chart().layer(records, {"type": "line", "point": True},
                          x=q("rate", f"bandwidth drawn ({rate.symbol})", axis={"format": NUMBER}),
                          y=q("latency", f"loaded latency ({time.symbol})", scale={"zero": False},
                              axis={"format": NUMBER}),
                          color=n("ladder", "load"), order=q("delay_cycles", sort="descending"),
                          tooltip=[tip("delay_cycles", "injected delay (cycles)", whole=True), tip("rate", rate.symbol),
                                   tip("latency", time.symbol), tip("outstanding_lines", "lines in flight"),
                                   tip("ladder", "load", number=False), tip("truncated", "cut short", number=False)])
    return chart.spec("Intel MLC: loaded latency vs bandwidth",
                      "each point one injected delay; from the largest delay (idle, left) to no delay (full load)")


def mlc_bandwidth_chart(section: SectionData) -> dict | None:
    rate = section.units["rate"]
    records = [{"traffic": row["traffic_label"] or row["traffic"], "mode": row["mode"],
                "rate": rate.scaled(row["bandwidth_mb_s"] * 1e6)}
               for row in section.rows if row["bandwidth_mb_s"] is not None]
    if not records:
        return None
    chart = Chart()
    charts.bars_with_ci(chart, records, x="traffic", x_title="read-write mix", y="rate", y_title=rate.symbol,
                        low=None, high=None, group="mode", group_title="MLC mode",
                        sort=list(dict.fromkeys(record["traffic"] for record in records)),
                        tooltip=[tip("traffic", number=False), tip("mode", number=False), tip("rate", rate.symbol)])
    return chart.spec("Intel MLC: bandwidth per read-write mix",
                      "peak injection: load threads with no delay; max bandwidth: the best of several injection rates "
                      "(MLC reports no spread)")


SECTIONS: tuple[Section, ...] = (
    Section("mlc", "mlc", "Intel MLC: idle and loaded latency", "mlc_loaded_latency", "mlc_loaded_latency",
            mlc_loaded_latency_chart,
            (Column("delay_cycles", "injected delay (cycles)", "count"), Column("bandwidth_mb_s", "bandwidth", "mb_s"),
             Column("latency_ns", "latency", "ns"), Column("outstanding_lines", "lines in flight", "number"),
             Column("traffic", "traffic"), Column("run_truncated", "cut short", "bool")),
            "Intel MLC as supplied by the user, run as shipped (its verbatim outputs are in the bundle's raw/mlc/). "
            "The second table is the idle latency per level, with buffers sized from this host's sysfs caches.",
            extra_view="mlc_idle_latency", extra_query="mlc_idle_latency",
            extra_columns=(Column("level", "level"), Column("buffer_bytes", "buffer", "bytes"),
                           Column("sysfs_size_bytes", "sysfs size", "bytes"),
                           Column("latency_ns", "idle latency", "ns"), Column("clocks", "clocks", "number"),
                           Column("clock", "clock"), Column("access", "access"), Column("buffer_rule", "buffer rule"),
                           Column("mlc_version", "MLC"))),
    Section("mlc-bandwidth", "mlc", "Intel MLC: bandwidth, NUMA matrices and cache-to-cache", "mlc_bandwidth",
            "mlc_bandwidth", mlc_bandwidth_chart,
            (Column("mode", "mode"), Column("traffic_label", "read-write mix"), Column("bandwidth_mb_s", "bandwidth", "mb_s"),
             Column("buffer_bytes", "buffer per thread", "bytes"), Column("run_truncated", "cut short", "bool")),
            extra_view="mlc_matrix", extra_query="mlc_matrix",
            extra_columns=(Column("mode", "mode"), Column("cpu_node", "CPU node", "count"),
                           Column("memory_node", "memory node", "count"), Column("scope", "c2c scope"),
                           Column("transfer_path", "c2c path"), Column("transfer", "transfer"),
                           Column("homed_in", "homed in"), Column("writer_node", "writer node", "count"),
                           Column("reader_node", "reader node", "count"), Column("latency_ns", "latency", "ns"),
                           Column("bandwidth_mb_s", "bandwidth", "mb_s"))),
)
