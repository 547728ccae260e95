"""`fleetscope report`: one self-contained HTML page per host run and a fleet index, from the warehouse.

Everything shown came from a measured host and is untrusted: templates autoescape, and chart specs
reach the page as JSON inside <script type="application/json">, escaped by Jinja's `tojson`. The
vega, vega-lite and vega-embed JavaScript is inlined so a page opens from file:// with no network.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import jinja2
import vl_convert

from fleetscope import __version__
from fleetscope.resources import TEMPLATES_DIR as RESOURCE_TEMPLATES
from fleetscope.report_derived import derived_context
from fleetscope.sections import SECTIONS, cache_marks, format_bytes  # noqa: F401 (re-exported)

TEMPLATES_DIR = RESOURCE_TEMPLATES / "report"

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


def _sections(connection: duckdb.DuckDBPyConnection, key: list, caches: list[dict], experiments: list[dict]) -> list:
    """The experiment sections of one host run: the latency curve always, every other section when the run
    has its experiment (with the experiment's status and notes when it drew nothing). An experiment with
    several sections (MLC) shows its status and notes once, in its first; a further section of it
    appears only when it has rows."""
    ran = {experiment["experiment"]: experiment for experiment in experiments}
    sections = []
    shown = set()
    for section in SECTIONS:
        if section.experiment not in ran and section.id != "latency":
            continue
        where = f" AND ({section.where})" if section.where else ""
        query = f"SELECT * FROM {section.view} WHERE run_id = ? AND host = ?{where} ORDER BY {section.order_by}"
        rows = _records(connection, query, key)
        extra_rows = _records(connection, f"SELECT * FROM {section.extra_view} WHERE run_id = ? AND host = ?",
                              key) if section.extra_view else []
        if section.experiment in shown and not rows and not extra_rows:
            continue
        sections.append({"section": section, "rows": rows, "extra_rows": extra_rows,
                         "chart_spec": section.chart(rows, caches), "experiment": ran.get(section.experiment),
                         "first_of_experiment": section.experiment not in shown})
        shown.add(section.experiment)
    return sections


def _host_page_context(connection: duckdb.DuckDBPyConnection, run: dict, runs: list[dict]) -> dict:
    key = [run["run_id"], run["host"]]
    facts_json = connection.execute("SELECT facts FROM facts WHERE run_id = ? AND host = ?", key).fetchone()[0]
    caches = _records(connection, "SELECT * FROM cache_levels WHERE run_id = ? AND host = ? ORDER BY cache_index", key)
    experiments = _records(
        connection, "SELECT * FROM experiments WHERE run_id = ? AND host = ? ORDER BY run_order", key
    )
    bundle_path = Path(run["bundle_path"])
    return {
        "run": run,
        "runs": runs,
        "facts": flatten_facts(json.loads(facts_json)),
        "caches": caches,
        "knobs": _records(connection, "SELECT * FROM knob_values WHERE run_id = ? AND host = ? ORDER BY knob", key),
        "experiments": experiments,
        "points": _records(
            connection, "SELECT * FROM points WHERE run_id = ? AND host = ? ORDER BY experiment, point_index", key
        ),
        "sections": _sections(connection, key, caches, experiments),
        **derived_context(connection, key),
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
