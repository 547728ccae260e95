"""Every experiment's place on a host page, by family, in the order of the page's table of contents.

`SECTIONS` is the ordered tuple of every section (each names its experiment by its registry name and the
warehouse view it reads); `FAMILIES` groups them for the table of contents and holds the summary's
headline figures. Adding an experiment to the page is one `Section` in its family's module (plus its
view in warehouse/views/ and its query in warehouse/queries/report/).
"""

from __future__ import annotations

from fleetscope.report.sections import bandwidth, cpu_io, intel_mlc, latency, storage, workloads
from fleetscope.report.sections.section import Column, Family, Figure, Headline, Section, SectionData, shown_columns

FAMILIES: tuple[Family, ...] = (latency.FAMILY, bandwidth.FAMILY, cpu_io.FAMILY, storage.FAMILY, intel_mlc.FAMILY,
                                workloads.FAMILY)
SECTIONS: tuple[Section, ...] = tuple(section for family in FAMILIES for section in family.sections)
HEADLINES: tuple[Headline, ...] = tuple(headline for family in FAMILIES for headline in family.headlines)

__all__ = ["FAMILIES", "HEADLINES", "SECTIONS", "Column", "Family", "Figure", "Headline", "Section", "SectionData",
           "shown_columns"]
