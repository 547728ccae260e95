"""Every experiment's place on a host page, by family, in the order of the page's table of contents.

Each module of this package holds the sections of one family (a chart and the tables under it, each naming
its experiment and the warehouse view it reads) and the headline figures they add to the page's summary.
`FAMILIES` groups them as the experiment catalogue (fleetscope.catalog) does, in its order and under its
titles; `SECTIONS` and `HEADLINES` are every section and headline in that order. Adding an experiment to the
page is one `Section` in its family's module (plus its view in warehouse/views/ and its query in
warehouse/queries/report/).
"""

from __future__ import annotations

from fleetscope import catalog
from fleetscope.report.sections import bandwidth, compute, cpu_io, intel_mlc, latency, storage, workloads
from fleetscope.report.sections.section import Column, Family, Figure, Headline, Section, SectionData, shown_columns

_MODULES = (latency, bandwidth, compute, cpu_io, storage, intel_mlc, workloads)


def _of_family(items, tag: str) -> tuple:
    return tuple(item for item in items if catalog.experiment(item.experiment).family == tag)


FAMILIES: tuple[Family, ...] = tuple(
    Family(family.title, _of_family((s for module in _MODULES for s in module.SECTIONS), family.tag),
           _of_family((h for module in _MODULES for h in getattr(module, "HEADLINES", ())), family.tag))
    for family in catalog.FAMILIES)
SECTIONS: tuple[Section, ...] = tuple(section for family in FAMILIES for section in family.sections)
HEADLINES: tuple[Headline, ...] = tuple(headline for family in FAMILIES for headline in family.headlines)

__all__ = ["FAMILIES", "HEADLINES", "SECTIONS", "Column", "Family", "Figure", "Headline", "Section", "SectionData",
           "shown_columns"]
