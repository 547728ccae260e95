"""`fleetscope report`: one self-contained HTML page per host run and a fleet index, from the warehouse.

Everything shown came from a measured host and is untrusted: templates autoescape, and chart specs
reach the page as JSON inside <script type="application/json">, escaped by Jinja's `tojson`. The
vega, vega-lite and vega-embed JavaScript is inlined so a page opens from file:// with no network.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path

import altair as alt
import duckdb
import jinja2
import vl_convert

from fleetscope import __version__

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates" / "report"

_BYTE_UNITS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
# Vega expression turning a byte count on the x axis into a KiB/MiB/GiB label.
_BYTES_LABEL_EXPR = (
    "datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB'"
    " : datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB'"
    " : datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB'"
    " : datum.value + ' B'"
)


def format_bytes(value: object) -> str:
    """1048576 -> '1 MiB'; anything that is not an integer is shown as it is."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "" if value is None else str(value)
    for factor, unit in _BYTE_UNITS:
        if value >= factor:
            return f"{value / factor:.4g} {unit}"
    return f"{value} B"


def host_file_stem(host: str) -> str:
    """A file name for a host that cannot traverse paths or collide with index.html.

    A host name that is not already plain gets a hash suffix so two odd names cannot share a file.
    """
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", host).strip(".")[:80]
    if stem != host or not stem or stem.lower() == "index":
        stem = f"{stem or 'host'}-{hashlib.sha256(host.encode('utf-8')).hexdigest()[:8]}"
    return stem


def _records(connection: duckdb.DuckDBPyConnection, sql: str, parameters: list | None = None) -> list[dict]:
    cursor = connection.execute(sql, parameters or [])
    columns = [description[0] for description in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def flatten_facts(facts: object, prefix: str = "") -> list[tuple[str, str]]:
    """Facts as (dotted path, value text) rows; caches are left out (they have their own table)."""
    if isinstance(facts, dict):
        rows = []
        for key, value in facts.items():
            if not prefix and key == "caches":
                continue
            rows.extend(flatten_facts(value, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    if isinstance(facts, list):
        if not facts:
            return [(prefix, "(none)")]
        if all(not isinstance(item, (dict, list)) for item in facts):
            return [(prefix, ", ".join(json.dumps(item) if isinstance(item, str) else str(item) for item in facts))]
        rows = []
        for index, item in enumerate(facts):
            rows.extend(flatten_facts(item, f"{prefix}[{index}]"))
        return rows
    if facts is None:
        return [(prefix, "null")]
    if isinstance(facts, bool):
        return [(prefix, "true" if facts else "false")]
    text = str(facts)
    if isinstance(facts, int) and prefix.endswith("_bytes"):
        text = f"{facts} ({format_bytes(facts)})"
    return [(prefix, text)]


def cache_marks(caches: list[dict]) -> list[dict]:
    """One labelled size per data/unified cache level from sysfs: L1d, L2, L3 ..."""
    marks = {}
    for cache in caches:
        if cache["type"] == "Instruction" or cache["size_bytes"] <= 0:
            continue
        label = f"L{cache['level']}d" if cache["type"] == "Data" else f"L{cache['level']}"
        marks[(label, cache["size_bytes"])] = {"label": label, "size_bytes": cache["size_bytes"]}
    return sorted(marks.values(), key=lambda mark: mark["size_bytes"])


def latency_chart(curve: list[dict], caches: list[dict]) -> dict | None:
    """Vega-Lite spec of the latency sweep: median per page policy with its CI band, min dashed,
    and a rule at each sysfs cache size. None when the run has no latency points."""
    if not curve:
        return None
    marks = cache_marks(caches)
    sizes = [row["working_set_bytes"] for row in curve] + [mark["size_bytes"] for mark in marks]
    low_exponent = math.floor(math.log2(min(sizes)))
    high_exponent = math.ceil(math.log2(max(sizes)))
    step = 1 if high_exponent - low_exponent <= 16 else 2
    ticks = [2**exponent for exponent in range(low_exponent, high_exponent + 1, step)]
    records = [
        {key: row[key] for key in ("working_set_bytes", "page_policy", "pattern", "median_ns", "min_ns",
                                   "ci95_low_ns", "ci95_high_ns", "median_cycles", "sample_count")}
        for row in curve
    ]
    for record in records:
        record["page_policy"] = record["page_policy"] or "unspecified"
        record["working_set"] = format_bytes(record["working_set_bytes"])

    x = alt.X(
        "working_set_bytes:Q",
        title="working set",
        scale=alt.Scale(type="log", base=2, domain=[2**low_exponent, 2**high_exponent]),
        axis=alt.Axis(values=ticks, labelExpr=_BYTES_LABEL_EXPR, grid=False),
    )
    latency_scale = alt.Scale(type="log", nice=False, padding=10)
    color = alt.Color("page_policy:N", title="page policy", legend=alt.Legend(symbolType="stroke", symbolOpacity=1))
    points = alt.Chart(alt.Data(values=records))
    band = points.mark_area(opacity=0.18).encode(
        x=x, y=alt.Y("ci95_low_ns:Q", scale=latency_scale), y2="ci95_high_ns:Q", color=color
    )
    median = points.mark_line(point=True).encode(
        x=x,
        y=alt.Y("median_ns:Q", title="latency (ns, log scale)", scale=latency_scale),
        color=color,
        tooltip=[
            alt.Tooltip("working_set:N", title="working set"),
            alt.Tooltip("page_policy:N", title="page policy"),
            alt.Tooltip("pattern:N"),
            alt.Tooltip("median_ns:Q", title="median ns", format=".3f"),
            alt.Tooltip("min_ns:Q", title="min ns", format=".3f"),
            alt.Tooltip("median_cycles:Q", title="median cycles", format=".2f"),
            alt.Tooltip("sample_count:Q", title="samples"),
        ],
    )
    minimum = points.mark_line(strokeDash=[4, 3], opacity=0.8).encode(
        x=x, y=alt.Y("min_ns:Q", scale=latency_scale), color=color
    )
    layers = [band, median, minimum]
    if marks:
        rules = alt.Chart(alt.Data(values=marks)).encode(x=alt.X("size_bytes:Q"))
        layers.append(rules.mark_rule(color="#777", strokeDash=[2, 2]))
        layers.append(rules.mark_text(align="left", dx=3, baseline="top", y=2, color="#444").encode(text="label:N"))
    chart = alt.layer(*layers).properties(
        width="container",
        height=380,
        title=alt.Title(
            "Load-to-use latency vs working set",
            subtitle="solid: median with 95% CI band; dashed: minimum; grey rules: cache sizes from sysfs",
        ),
    )
    return chart.to_dict()


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["bytes"] = format_bytes
    environment.filters["compact_json"] = lambda value: value if value is None else json.dumps(
        json.loads(value), separators=(", ", ": ")
    )
    return environment


def _vega_javascript() -> str:
    bundle = vl_convert.javascript_bundle()
    # An HTML parser ends a <script> at the first "</script"; the bundle has none today, keep it so.
    return bundle.replace("</script", "<\\/script")


def _run_page_name(host: str, run_id: str, latest_run_id: str) -> str:
    stem = host_file_stem(host)
    return f"{stem}.html" if run_id == latest_run_id else f"{stem}--{run_id}.html"


def _host_page_context(connection: duckdb.DuckDBPyConnection, run: dict, runs: list[dict]) -> dict:
    key = [run["run_id"], run["host"]]
    facts_json = connection.execute("SELECT facts FROM facts WHERE run_id = ? AND host = ?", key).fetchone()[0]
    caches = _records(connection, "SELECT * FROM cache_levels WHERE run_id = ? AND host = ? ORDER BY cache_index", key)
    curve = _records(
        connection,
        "SELECT * FROM latency_curve WHERE run_id = ? AND host = ? ORDER BY page_policy, working_set_bytes",
        key,
    )
    bundle_path = Path(run["bundle_path"])
    return {
        "run": run,
        "runs": runs,
        "facts": flatten_facts(json.loads(facts_json)),
        "caches": caches,
        "knobs": _records(connection, "SELECT * FROM knob_values WHERE run_id = ? AND host = ? ORDER BY knob", key),
        "experiments": _records(
            connection, "SELECT * FROM experiments WHERE run_id = ? AND host = ? ORDER BY run_order", key
        ),
        "points": _records(
            connection, "SELECT * FROM points WHERE run_id = ? AND host = ? ORDER BY experiment, point_index", key
        ),
        "chart_spec": latency_chart(curve, caches),
        "raw_path": bundle_path / "raw",
        "raw_present": (bundle_path / "raw").is_dir(),
        "bundle_present": bundle_path.is_dir(),
    }


def write_reports(connection: duckdb.DuckDBPyConnection, out_dir: Path) -> list[Path]:
    """Write index.html and a page per host run into `out_dir`; return the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    environment = _environment()
    common = {
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "fleetscope_version": __version__,
    }
    vega_javascript = _vega_javascript()
    hosts = _records(connection, "SELECT * FROM fleet_overview ORDER BY host")
    written = []
    for host in hosts:
        runs = _records(
            connection, "SELECT * FROM runs_overview WHERE host = ? ORDER BY started_at DESC, run_id DESC", [host["host"]]
        )
        for run in runs:
            run["page"] = _run_page_name(run["host"], run["run_id"], host["last_run_id"])
        host["page"] = runs[0]["page"]
        for run in runs:
            page = environment.get_template("host.html.j2").render(
                **common,
                **_host_page_context(connection, run, runs),
                is_latest=run["run_id"] == host["last_run_id"],
                vega_javascript=vega_javascript,
            )
            path = out_dir / run["page"]
            path.write_text(page, encoding="utf-8")
            written.append(path)
    index = out_dir / "index.html"
    index.write_text(environment.get_template("index.html.j2").render(**common, hosts=hosts), encoding="utf-8")
    written.append(index)
    return written
