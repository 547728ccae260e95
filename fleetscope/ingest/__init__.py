"""The boundary stage: what comes from a host or another tool enters here. A bundle is opened and checked
(bundle), loaded one transaction per bundle (load), and other tools' outputs are parsed (parsers/), imported
(imports) or kept as reference hosts (reference, curve_csv). It hands rows to analyze/ and store/."""
