"""The analysis stage: what the tool concludes from a run's points — the inferred hierarchy (inference),
the derived tables written at ingest (derive), the plausibility flags (plausibility) and the precision
each point reached (precision). It reads and writes the warehouse through store/ and knows no page."""
