"""The boundary stage: what comes from a host or another tool enters here. A bundle is opened and checked
(bundle), loaded a batch per transaction (load), and other tools' outputs are parsed (parsers/), imported
(imports) or kept as reference hosts (reference, curve_csv). It hands rows to analyze/ and store/."""

# Bundles per batch of `fleetscope ingest` (--batch): staged and derived together, handed over in one
# transaction. The stage holds one batch's rows, so memory follows the batch, not the warehouse.
DEFAULT_BATCH = 32
