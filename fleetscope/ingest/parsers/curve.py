"""A latency or TLB curve as CSV (`bytes,ns` or `pages,ns`, optional `std`): the file a reference host's
bundle keeps verbatim (`fleetscope import curve`), read by the same code as `fleetscope infer --csv`
(fleetscope.ingest.curve_csv), so a bundle's copy is held to the same FILE:LINE checks as the user's file.

parse() -> {"tool": "curve", "source": str, "kind": "bytes" | "pages", "relative": bool, "relative_because": str | None,
            "points": [{"size", "ns", "std"}]}   (size: bytes or pages, as `kind` says; std None when absent)
A curve whose smallest sizes read 0 is read as relative (ns over L1), as `infer --csv` reads it.
"""

from __future__ import annotations

from fleetscope.ingest.parsers import sample, text_table


def parse(text: str, source: str = "<input>") -> dict:
    from fleetscope.ingest.curve_csv import parse_curve

    curve = parse_curve(text, source)
    spreads = curve.std if curve.std is not None else [None] * len(curve.sizes)
    return {"tool": "curve", "source": source, "kind": curve.kind, "relative": curve.relative, "relative_because": curve.note,
            "points": [{"size": size, "ns": ns, "std": std} for size, ns, std in zip(curve.sizes, curve.ns, spreads)]}


def rows(parsed: dict) -> list[dict]:
    size_key = "working_set_bytes" if parsed["kind"] == "bytes" else "pages"
    metric = "latency_over_l1" if parsed["relative"] else "latency"
    return [sample(metric, point["ns"], "ns", **{size_key: point["size"], "std_ns": point["std"]})
            for point in parsed["points"]]


def table(parsed: dict) -> list[str]:
    what = "ns over L1" if parsed["relative"] else "ns"
    out = [f"curve: {len(parsed['points'])} rows, {parsed['kind']} vs {what}"
           + (f" ({parsed['relative_because']})" if parsed["relative_because"] else "")]
    return out + text_table([parsed["kind"], what, "std"], [[point["size"], point["ns"], point["std"]]
                                                            for point in parsed["points"]])
