"""The user's workloads on a host page: wall time per workload, coloured by where it stalls as far as the
host's counters tell, with the perf figures and the classification's evidence."""

from __future__ import annotations

from fleetscope.report.charts import NUMBER, Chart, n, q, tip
from fleetscope.report.sections.section import Column, Section, SectionData


def workloads_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    records = [{"workload": row["workload"], "wall": time.scaled(row["wall_median_s"] * 1e9),
                "classification": row["classification"], "counter_tier": row["counter_tier"], "ipc": row["ipc"]}
               for row in section.rows if row["wall_median_s"] is not None]
    if not records:
        return None
    chart = Chart().layer(records, "bar", x=q("wall", f"wall time ({time.symbol}, median of runs)", axis={"format": NUMBER}),
                          y=n("workload", None), color=n("classification", "classification"),
                          tooltip=[tip("workload", number=False), tip("wall", time.symbol),
                                   tip("classification", number=False), tip("counter_tier", number=False), tip("ipc")])
    return chart.spec("Workloads", "wall time per run (no CI: each workload runs a few times); colour: where it "
                      "stalls, as far as this host's counters tell", height=max(90, 28 * len(records)))


SECTIONS: tuple[Section, ...] = (
    Section("workloads", "workloads", "Workloads", "workload_profile", "workload_profile", workloads_chart,
            (Column("workload", "workload"), Column("status", "status"), Column("runs", "runs", "count"),
             Column("wall_median_s", "wall", "s"), Column("user_median_s", "user", "s"),
             Column("sys_median_s", "system", "s"), Column("counter_tier", "counter tier"),
             Column("ipc", "IPC", "number"), Column("cache_mpki", "cache MPKI", "number"),
             Column("l1d_miss_rate", "L1d miss rate", "number"), Column("dtlb_mpki", "dTLB MPKI", "number"),
             Column("itlb_mpki", "iTLB MPKI", "number"), Column("branch_miss_rate", "branch miss rate", "number"),
             Column("context_switches", "context switches", "count"), Column("cpu_migrations", "migrations", "count"),
             Column("classification", "classification"), Column("evidence", "evidence")),
            "Your fleet_workloads, each timed and counted under perf stat. The classification says which counter "
            "tier it rests on; where the host's perf counts only software events it is 'unclassified: counters "
            "unavailable'."),
)
