"""Profiled workloads on a host page: the reference workload fleetscope runs on every host and the user's own,
each one's wall time coloured by its case (A store/dependency-bound, B miss-bound, C instruction-cache-bound, or
undecided), the rates it rests on, the case with its evidence and next step or what the counters could not
decide, and (a derived table) each function's share of the time beside its share of the misses."""

from __future__ import annotations

from fleetscope.report.charts import NUMBER, Chart, n, q, tip
from fleetscope.report.sections.section import Column, Figure, Headline, Section, SectionData, mean_std
from fleetscope.units import format_quantity


TOP_FUNCTIONS = 12  # per workload in the chart (the derived table lists more, the warehouse all)


def workloads_chart(section: SectionData) -> dict | None:
    """Where each workload's time and misses go, function by function, where perf record profiled it; else the
    wall time per workload."""
    return functions_chart(section) or wall_chart(section)


def functions_chart(section: SectionData) -> dict | None:
    cases = {row["workload"]: row for row in section.rows}
    several = len(cases) > 1
    records = []
    for workload in cases:
        functions = [row for row in section.derived.get("workload_functions", []) if row["workload"] == workload]
        for row in functions[:TOP_FUNCTIONS]:
            name = (f"{workload} · " if several else "") + row["symbol"] + (" [kernel]" if row["kernel"] else "")
            for profile, share, event in (("time", row["time_share"], cases[workload]["time_event"]),
                                          ("misses", row["miss_share"], cases[workload]["miss_event"])):
                if share is not None:
                    records.append({"function": name, "profile": f"{profile} ({event})", "share": 100 * share,
                                    "mark": row["mark"] or ""})
    if not records:
        return None
    order = list(dict.fromkeys(record["function"] for record in records))
    profiles = sorted({record["profile"] for record in records}, key=lambda name: not name.startswith("time"))
    chart = Chart().layer(records, "bar", x=q("share", "share of the profile's samples (%)", axis={"format": NUMBER}),
                          y=n("function", None, sort=order), yOffset=n("profile", sort=profiles),
                          color=n("profile", "profile", sort=profiles),
                          tooltip=[tip("function", number=False), tip("profile", number=False), tip("share", "%"),
                                   tip("mark", number=False)])
    return chart.spec("Where the time and the misses go", "each function's share of the time profile beside its "
                      f"share of the miss profile, where the PMU could sample misses; the top {TOP_FUNCTIONS} "
                      "functions of each workload", height=max(90, 24 * len(order)))


def wall_chart(section: SectionData) -> dict | None:
    time = section.units["time"]
    records = [{"workload": row["workload"] + (" (reference)" if row["reference"] else ""),
                "wall": time.scaled(row["wall_median_s"] * 1e9), "case": row["classification"],
                "counter_tier": row["counter_tier"], "ipc": row["ipc"]}
               for row in section.rows if row["wall_median_s"] is not None]
    if not records:
        return None
    chart = Chart().layer(records, "bar", x=q("wall", f"wall time ({time.symbol}, median of runs)", axis={"format": NUMBER}),
                          y=n("workload", None), color=n("case", "case"),
                          tooltip=[tip("workload", number=False), tip("wall", time.symbol), tip("case", number=False),
                                   tip("counter_tier", number=False), tip("ipc")])
    return chart.spec("Workloads", "wall time per run (no CI: each workload runs a few times); colour: its case, as far "
                      "as this host's counters tell", height=max(90, 28 * len(records)))


def workload_findings(section: SectionData) -> list[dict]:
    """Each workload's case in words, the reference workload first: what it is, the next step, the evidence, what
    could not be decided, what else the numbers say, and how far its profiles can rank functions."""
    findings = []
    for row in section.rows:
        name = row["workload"] + (" (reference workload)" if row["reference"] else "")
        lines = [("next step", row["next_step"]), ("evidence", row["evidence"]),
                 ("not decided" if row["case_id"] is None else "not measured", row["undecided"]),
                 ("also noticed", row["noticed"]), ("time profile", row["time_rule"]),
                 ("miss profile", row["miss_rule"] or row["miss_note"])]
        findings.append({"title": f"{name}: {row['classification']}",
                         "lines": [(label, text) for label, text in lines if text]})
    return findings


def reference_figure(rows: list[dict]) -> Figure:
    """The reference workload in a line: its case (or undecided, and why in short) and its wall time."""
    row = next((row for row in rows if row["reference"]), None)
    if row is None:
        return Figure(None, "the reference workload was not profiled in this run (workloads_reference)")
    if row["status"] != "ok" or row["wall_median_s"] is None:
        return Figure(None, f"the reference workload failed: {row['failure'] or 'no record'}")
    case = row["classification"]
    if row["case_id"] is None and row["counter_tier"] != "hardware":
        case = f"case undecided (counter tier {row['counter_tier']}: no instruction or miss counts)"
    wall = format_quantity(row["wall_median_s"], "s")
    return Figure(f"{case} · {wall} a run", values={"reference_workload_s": row["wall_median_s"]})


SECTIONS: tuple[Section, ...] = (
    Section("workloads", "workloads", "Workloads", "workload_profile", "workload_profile", workloads_chart,
            (Column("workload", "workload"), Column("reference", "reference", "bool"), Column("status", "status"),
             Column("runs", "runs", "count"), Column("wall_median_s", "wall", "s"),
             mean_std("wall_mean_s", "wall_std_s", "s"), Column("user_median_s", "user", "s"),
             Column("sys_median_s", "system", "s"), Column("counter_tier", "counter tier"),
             Column("ipc", "IPC", "number"), Column("cache_mpki", "cache MPKI", "number"),
             Column("llc_mpki", "LLC MPKI", "number"), Column("l1d_miss_rate", "L1d miss rate", "percent"),
             Column("dtlb_mpki", "dTLB MPKI", "number"), Column("itlb_mpki", "iTLB MPKI", "number"),
             Column("icache_mpki", "L1i MPKI", "number"), Column("branch_miss_rate", "branch miss rate", "percent"),
             Column("running_percent_min", "least % counted", "number"),
             Column("page_faults", "page faults", "count"), Column("context_switches", "context switches", "count"),
             Column("classification", "case")),
            "The reference workload (alloc_walk: allocator churn plus a walk over the reused blocks) runs on every "
            "host; your fleet_workloads add to it. Each is counted under perf stat with the allocator study's counter "
            "set and profiled by perf record by time and by misses; a rate the PMU could not give is a dash, never a "
            "zero. MPKI: misses per 1k instructions. Each workload's case comes first with its next step, or what "
            "could not be decided and why; the function table (time vs misses) is with the derived tables.",
            extra_view="workload_profile", extra_query="workload_cases",
            extra_columns=(Column("workload", "workload"), Column("classification", "case"),
                           Column("evidence", "evidence"), Column("next_step", "next step"),
                           Column("undecided", "not decided or not measured"), Column("noticed", "also noticed"),
                           Column("time_rule", "time profile"), Column("miss_rule", "miss profile"),
                           Column("miss_note", "no miss profile because")),
            findings=workload_findings),
)

HEADLINES: tuple[Headline, ...] = (
    Headline("Reference workload", "workloads", "workloads", "workload_profile", reference_figure,
             (Column("reference_workload_s", "reference workload", "s"),)),
)
