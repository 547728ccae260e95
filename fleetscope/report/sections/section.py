"""The shapes an experiment module fills in to appear on a host page: its sections (a chart and the
tables under it), the headline figures it adds to the page's summary, and its family in the table of
contents. fleetscope.report.pages renders them without knowing any experiment by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from fleetscope.units import Unit


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    # text | number | count | bytes | bool | percent (a fraction shown as %), or a quantity kind of
    # fleetscope.units.KINDS
    kind: str = "text"
    # Shown only where the section's rows hold more than one core kind (shown_columns): a
    # host with one kind keeps the table it had.
    per_kind: bool = False
    # The column of the same row holding this value's standard deviation: the cell reads "mean ± std" (every lab
    # report states mean ± std; the tables give it beside median and CI95).
    spread: str | None = None
    # Shown only where some row has a value (a relative curve's latency over L1): other tables stay as they were.
    optional: bool = False


# The core kind(s) a row measured, a column of every section a host with more than one kind measures per kind.
CORE_KIND = Column("core_kind", "core kind", per_kind=True)


def mean_std(mean: str, std: str, kind: str) -> Column:
    """The "mean ± std" column of a raw table, in the unit of its median."""
    return Column(mean, "mean ± std", kind, spread=std)


def shown_columns(columns: tuple[Column, ...], rows: list[dict]) -> tuple[Column, ...]:
    """The columns a table shows for these rows: the per-kind ones only where the rows name a core kind (the
    report queries and fleetscope.analyze.derive name one only on a host with more than one), so a one-kind host's
    table is as it was; an optional one only where some row has a value."""
    per_kind = any(row.get("core_kind") for row in rows)
    return tuple(column for column in columns if (per_kind or not column.per_kind)
                 and (not column.optional or any(row.get(column.key) is not None for row in rows)))


@dataclass(frozen=True)
class SectionData:
    """What a chart builder gets for one host run."""
    rows: list[dict]                  # the section's view, filtered and ordered
    caches: list[dict]                # the run's sysfs caches (cache_levels)
    derived: dict[str, list[dict]]    # the run's derived rows, by table name (fleetscope.report.derived_tables)
    units: dict[str, Unit]            # the unit of each quantity in this section, shared by chart and tables
    extra_rows: list[dict] = field(default_factory=list)  # the section's second table (extra_view), where it has one


@dataclass(frozen=True)
class Section:
    id: str           # HTML id prefix: <id>-chart, <id>-chart-spec, <id>-table, <id>-extra-table
    experiment: str   # the experiment (registry name) whose points feed it
    title: str
    view: str         # the warehouse view it reads
    query: str        # warehouse/queries/report/<query>.sql: its rows for (run_id, host)
    chart: Callable[[SectionData], dict | None]
    columns: tuple[Column, ...] = field(default_factory=tuple)
    note: str = ""
    extra_view: str | None = None  # a second table (e.g. write_cost's flush round trip)
    extra_query: str | None = None
    extra_columns: tuple[Column, ...] = field(default_factory=tuple)
    # Values of its rows the chart draws that no table shows: they take part in choosing the section's units.
    drawn: tuple[Column, ...] = field(default_factory=tuple)
    # For a view several sections share (bandwidth_points): the flag items of this section start with it.
    flag_prefix: str = ""
    # What the section concludes, in words, shown above its chart (not collapsed like the raw tables):
    # [{"id", "title", "lines": [(label, text)]}] for one run.
    findings: Callable[[SectionData], list[dict]] | None = None


@dataclass(frozen=True)
class Figure:
    """A headline figure in words, or why there is none although the experiment ran, and the numbers the
    words show, keyed by their headline's columns (the fleet page, `compare` and `outliers` read those)."""
    text: str | None
    note: str | None = None
    values: dict[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Headline:
    """One figure of the summary at the top of a host page."""
    label: str
    experiment: str   # the experiment that measures it: its status explains a missing figure
    section: str      # the id of the section it comes from (the summary links there)
    # the rows it reads: a derived table (fleetscope.report.derived_tables) or a query
    # warehouse/queries/report/<source>.sql of the run's (run_id, host)
    source: str
    figure: Callable[[list[dict]], Figure]
    # The numbers of the figure as fleet columns (key, header, unit kind), in the order the fleet table
    # shows them; a figure with none (the knee: a pair of numbers no host is sorted by) has no column.
    columns: tuple[Column, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Family:
    """A group of sections in the page's table of contents, and the headlines it adds to the summary."""
    title: str
    sections: tuple[Section, ...]
    headlines: tuple[Headline, ...] = field(default_factory=tuple)
