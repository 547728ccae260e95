"""The presentation stage: host pages (pages, with each experiment's section in sections/), the summary at
their top, the derived tables they show, the fleet and compare pages (fleet, fleet_pages), the chart
builder and the notebook helpers (notebook). It reads the warehouse and never writes it."""
