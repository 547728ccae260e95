"""The derived tables a host page shows (what fleetscope.analyze.derive wrote for the run: the inferred hierarchy
beside sysfs, TLB reach, MLP saturation, loaded-latency figures, bandwidth per level, the SAXPY fit, the firmware's
claims beside the measured figures, every plausibility check and each workload's functions by time and misses), from
one list keyed by table name.

Each table's rows for a run come from warehouse/queries/report/derived_<table>.sql; charts and the summary
read them from the same dict (`derived_rows`), and the page shows each table under its title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fleetscope import catalog
from fleetscope.report.charts import level_size_text
from fleetscope.report.sections import SECTIONS, Column
from fleetscope.units import format_count_bracket


@dataclass(frozen=True)
class DerivedTable:
    name: str                    # the warehouse table (one of fleetscope.analyze.derive's)
    title: str
    columns: tuple[Column, ...]

    @property
    def section(self) -> str | None:
        """The id of the section whose curve it is inferred from (the page links it): the first section of
        the experiments the catalogue says feed it."""
        experiments = catalog.fed_by(self.name)
        return next((section.id for section in SECTIONS if section.experiment in experiments), None)

    @property
    def html_id(self) -> str:
        return self.name.replace("_", "-")


# Each core kind's rows on a host with more than one (their kind and the CPU measured), shown first.
_KIND = (Column("core_kind", "core kind", per_kind=True), Column("cpu", "CPU", "count", per_kind=True))

SHOWN_TABLES: tuple[DerivedTable, ...] = (
    DerivedTable("inferred_levels", "Cache levels: effective vs sysfs", (
        *_KIND, Column("page_policy", "pages"), Column("level", "level"), Column("latency_ns", "latency", "ns"),
        Column("latency_over_l1_ns", "over L1 (a relative curve)", "ns", optional=True),
        Column("latency_cycles", "cycles", "number"), Column("size_text", "size: bracket · best estimate"),
        Column("size_estimator", "read at"), Column("sysfs_size_bytes", "sysfs size", "bytes"),
        Column("onset_bytes", "rise from", "bytes"), Column("completion_bytes", "rise to", "bytes"),
        Column("note", "note"))),
    DerivedTable("inferred_tlb", "TLB entries and page-walk cost", (
        *_KIND, Column("page_size", "page size"), Column("l1_text", "L1 entries: bracket · estimate"),
        Column("l1_onset_pages", "L1 step from", "count"), Column("l1_completion_pages", "to", "count"),
        Column("l1_miss_ns", "L1 miss", "ns"), Column("l2_text", "L2 entries: bracket · estimate"),
        Column("l2_onset_pages", "L2 step from", "count"), Column("l2_completion_pages", "to", "count"),
        Column("walk_ns", "walk", "ns"), Column("note", "note"))),
    DerivedTable("inferred_mlp", "Memory-level parallelism", (
        Column("working_set_bytes", "working set", "bytes"), Column("saturation_chains", "saturates at k", "count"),
        Column("max_mlp", "largest MLP", "number"), Column("max_mlp_chains", "at k", "count"),
        Column("note", "note"))),
    DerivedTable("inferred_loaded_latency", "Loaded latency: idle, peak, knee", (
        Column("source", "source"), Column("path", "output"), Column("traffic", "traffic"),
        Column("idle_latency_ns", "idle", "ns"), Column("idle_source", "idle from"),
        Column("saturated_latency_ns", "at saturation", "ns"), Column("peak_bandwidth_gb_s", "peak", "gb_s"),
        Column("knee_low_gb_s", "knee from", "gb_s"), Column("knee_high_gb_s", "knee to", "gb_s"),
        Column("knee_bandwidth_gb_s", "Kneedle point", "gb_s"), Column("knee_latency_ns", "its latency", "ns"),
        Column("doubling_bandwidth_gb_s", "2× idle at", "gb_s"),
        Column("knee_outstanding_lines", "lines in flight at knee", "number"), Column("note", "note"))),
    DerivedTable("inferred_level_bandwidth", "Bandwidth per inferred level", (
        *_KIND, Column("level", "level"), Column("op", "op"), Column("store", "stores"),
        Column("bandwidth_gb_s", "bandwidth", "gb_s"), Column("sizes", "sweep points", "count"),
        Column("note", "note"))),
    DerivedTable("inferred_saxpy", "SAXPY: slowdown and miss-cost fit", (
        *_KIND, Column("strides", "strides", "count"), Column("max_slowdown", "largest slowdown", "number"),
        Column("max_slowdown_stride", "at stride", "count"), Column("miss_event", "miss counter"),
        Column("hit_ns", "hit", "ns"), Column("miss_penalty_ns", "miss penalty", "ns"),
        Column("r_squared", "R²", "number"), Column("note", "note"))),
    DerivedTable("workload_functions", "Workload functions: share of the time vs share of the misses", (
        Column("workload", "workload"), Column("symbol", "function"), Column("dso", "object"),
        Column("time_share", "time", "percent"), Column("time_share_below", "time under", "percent", optional=True),
        Column("time_rank", "rank"), Column("miss_share", "misses", "percent", optional=True),
        Column("miss_share_below", "misses under", "percent", optional=True), Column("miss_rank", "rank", optional=True),
        Column("miss_per_time", "misses / time", "number", optional=True), Column("ratio_bound", "ratio is", optional=True),
        Column("mark", "mark", optional=True))),
    DerivedTable("inferred_clock", "Clock: turbo curve per instruction class", (
        Column("class", "class"), Column("vector_bits", "bits", "count"), Column("one_core_ghz", "1 core", "ghz"),
        Column("all_cores_ghz", "all cores", "ghz"), Column("max_active_cores", "cores", "count"),
        Column("drop", "drop", "percent"), Column("vs_scalar_one_core", "vs scalar_int, 1 core", "number"),
        Column("vs_scalar_all_cores", "vs scalar_int, all cores", "number"), Column("flat", "flat", "bool"),
        Column("steps", "falls at"), Column("note", "note"))),
    DerivedTable("inferred_clock_ramp", "Clock ramp from idle", (
        Column("ramps", "ramps", "count"), Column("ramp_ms", "to 95% of top (ms)", "number"),
        Column("max_ramp_ms", "slowest (ms)", "number"), Column("idle_ghz", "woke at", "ghz"),
        Column("top_ghz", "top", "ghz"), Column("slice_ms", "slice (ms)", "number"),
        Column("slices_left_out", "slices left out", "count"), Column("flat", "flat", "bool"),
        Column("note", "note"))),
    DerivedTable("firmware_claims", "Firmware's figures beside the measured", (
        Column("source", "firmware"), Column("figure", "figure"), Column("claimed", "claims", "number"),
        Column("measured", "measured", "number"), Column("unit", "unit"), Column("ratio", "measured / claimed", "number"),
        Column("measured_by", "measured by"), Column("verdict", "verdict"), Column("note", "note"))),
    DerivedTable("flags", "Plausibility checks", ()),
)

SHOWN_TABLE_NAMES: tuple[str, ...] = tuple(table.name for table in SHOWN_TABLES)


def _readable(name: str, row: dict) -> dict:
    """A row with the texts its table shows beside its numbers: a size or an entries count with its bracket."""
    if name == "inferred_levels":
        return {**row, "size_text": level_size_text(row)}
    if name == "inferred_tlb":
        return {**row, **{f"{level}_text": format_count_bracket(row.get(f"{level}_low_pages"),
                                                                row.get(f"{level}_high_pages"),
                                                                row.get(f"{level}_entries")) or None
                          for level in ("l1", "l2")}}
    return row


def derived_rows(fetch: Callable[[str], list[dict]]) -> dict[str, list[dict]]:
    """Every derived table's rows of one run, by table name, with the texts their tables show; `fetch(query)`
    returns the run's rows of warehouse/queries/report/<query>.sql."""
    return {table.name: [_readable(table.name, row) for row in fetch(f"derived_{table.name}")] for table in SHOWN_TABLES}
