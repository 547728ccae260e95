"""`fleetscope report`: an HTML page per host run and a fleet index, from the warehouse.

Everything shown came from a measured host and is untrusted: templates autoescape, and chart specs reach
the page as JSON inside <script type="application/json">, escaped by Jinja's `tojson`. The Vega runtime
is written once into OUT/assets/ under a versioned name and every page loads it relatively, so the pages
open from file:// with no network and a fleet carries one copy of it.

A page is rewritten only when what it shows may have changed: OUT/.fleetscope-report.json keeps, per page,
a key over the run's bundle hash, its load and inference, the host's list of runs, the bundle folder's
presence and the renderer itself (templates, queries, views and this package's code), and beside it what
the fleet page shows of the run (its summary's numbers, its thinned curves): the fleet page (index.html,
fleetscope.report.fleet_pages) is made from those alone, and written again only when a host's latest or previous
run, the refused bundles or the renderer changed. A section that cannot be drawn for a run shows an error
box on that page; the others and every other page are written. `fleetscope compare`'s page is written here
too (write_compare_page).

This module names no experiment: the sections, their queries and the summary's figures come from
fleetscope.report.sections, the derived tables from fleetscope.report.derived_tables.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Callable

import duckdb
import jinja2
import vl_convert
from markupsafe import Markup

from fleetscope import __version__

from fleetscope.report import check, fleet, fleet_pages, plan, summary
from fleetscope.store.batch import Batch, records
from fleetscope.store.query import visible
from fleetscope.report.sections import FAMILIES, SECTIONS, Column, Section, SectionData, shown_columns
from fleetscope.report.derived_tables import SHOWN_TABLES, derived_rows
from fleetscope.resources import PACKAGE_DIR, QUERIES_DIR, TEMPLATES_DIR, WAREHOUSE_DIR, sql
from fleetscope.units import (KINDS, QUANTITIES, Unit, choose_unit, format_bytes, format_count, format_number,
                              NOT_FINITE, format_percent, format_with_unit, readable_text, to_base)

PAGE_TEMPLATES_DIR = TEMPLATES_DIR / "report"
MANIFEST_NAME = ".fleetscope-report.json"
ASSETS_DIR = "assets"
# Names a host's page or folder may not take: the index, the assets folder.
_RESERVED_STEMS = ("index", ASSETS_DIR)
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-")
_MAX_STEM = 120
# Pages built together: each report query runs once per batch (a view is scanned once for all of them,
# not once per page), and a batch's rows stay small enough to hold.
BATCH_RUNS = 64


def page_stem(name: str) -> str:
    """A file name stem for a host or run id that is injective and cannot traverse paths.

    Letters, digits, '.' and '-' stay; every other character (the escape character '_' included) becomes
    '_' and the two hex digits of each of its UTF-8 bytes, so two names never share a stem. A leading '.'
    and the reserved names (index, assets, in any case) get their first character escaped. A stem longer
    than 120 characters is cut and ends with '~' and 16 hex digits of the name's SHA-256 ('~' is never
    produced by the escape).
    """
    stem = "".join(char if char in _SAFE else "".join(f"_{byte:02x}" for byte in char.encode("utf-8"))
                   for char in name)
    if not stem or stem.startswith(".") or stem.lower() in _RESERVED_STEMS:
        stem = f"_{ord(name[0]):02x}{stem[1:]}" if name else "_"
    if len(stem) > _MAX_STEM:
        stem = f"{stem[:_MAX_STEM - 17]}~{hashlib.sha256(name.encode('utf-8')).hexdigest()[:16]}"
    return stem


def page_path(host: str, run_id: str, latest_run_id: str) -> str:
    """Where a run's page goes in the output folder: <host>.html for the host's latest run, and
    <host>/<run_id>.html for each older run (a folder per host, so no name of one host can be the name of
    another host's older run)."""
    host_stem = page_stem(host)
    return f"{host_stem}.html" if run_id == latest_run_id else f"{host_stem}/{page_stem(run_id)}.html"


def flatten_facts(facts: object, prefix: str = "") -> list[tuple[str, str]]:
    """Facts as (dotted path, value text) rows; caches are left out (they have their own table), and so is
    every CPU's record (topology.cpus: hundreds of rows on a big host; the core kinds summarise them)."""
    if isinstance(facts, dict):
        rows = []
        for key, value in facts.items():
            if not prefix and key == "caches":
                continue
            if prefix == "topology" and key == "cpus" and isinstance(value, list):
                rows.append(("topology.cpus", f"{len(value)} CPUs, each with its place and clocks (in the manifest)"))
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
        text = f"{facts:,} ({format_bytes(facts)})"
    return [(prefix, text)]


# ---- tables --------------------------------------------------------------------------------------------

def choose_units(tables: list[tuple[tuple[Column, ...], list[dict]]]) -> dict[str, Unit]:
    """One unit per quantity for everything these (columns, rows) show: a section's tables and chart, or a
    derived table."""
    values: dict[str, list[float]] = defaultdict(list)
    for columns, rows in tables:
        for column in columns:
            if column.kind in KINDS:
                values[KINDS[column.kind][0]].extend(
                    to_base(row[column.key], column.kind) for row in rows
                    if isinstance(row.get(column.key), (int, float)) and not isinstance(row[column.key], bool))
    return {quantity: choose_unit(quantity, values[quantity]) for quantity in QUANTITIES}


def cell_text(value: object, kind: str, units: dict[str, Unit]) -> str | None:
    """A table cell for people; None for a missing value (the page shows a dash)."""
    if value is None:
        return None
    if isinstance(value, bool) or kind == "bool":
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if kind in KINDS:
            return units[KINDS[kind][0]].text(to_base(value, kind))
        if kind == "bytes":
            return format_bytes(value)
        if kind == "count":
            return format_count(value)
        if kind == "percent":
            return format_percent(value)
        return format_number(value)
    return readable_text(str(value))


def header_text(column: Column, units: dict[str, Unit]) -> str:
    if column.kind not in KINDS:
        return column.header
    symbol = units[KINDS[column.kind][0]].symbol
    return f"{column.header} ({symbol})" if column.header else symbol


def table(html_id: str, columns: tuple[Column, ...], rows: list[dict], units: dict[str, Unit]) -> dict:
    """A table ready for the page: headers, which columns are numeric, and every cell as text."""
    numeric = [column.kind not in ("text", "bool") for column in columns]
    return {"id": html_id, "headers": [header_text(column, units) for column in columns], "numeric": numeric,
            "rows": [[_cell(row, column, units) for column in columns] for row in rows]}


def _cell(row: dict, column: Column, units: dict[str, Unit]) -> str | None:
    """A cell's text: its value, or "mean ± std" for a column with a spread (the mean alone where no std)."""
    text = cell_text(row.get(column.key), column.kind, units)
    if column.spread is None or text is None:
        return text
    spread = cell_text(row.get(column.spread), column.kind, units)
    return f"{text} ± {spread}" if spread is not None else text


# ---- one host run --------------------------------------------------------------------------------------

@dataclass
class Failure:
    """A part of a page that could not be built: where, what, and the exception."""
    page: str
    part: str
    what: str
    error: str

    def __str__(self) -> str:
        return f"{self.page}: {self.part}: {self.what}: {self.error}"


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _flags_of(section: Section, flags: list[dict]) -> list[dict]:
    return [flag for flag in flags if flag["status"] == "flagged" and flag["subject"] in (section.view, section.extra_view)
            and (flag["item"] or "").startswith(section.flag_prefix)]


def _section(fetch: Callable[[str], list[dict]], section: Section, caches: list[dict], derived: dict[str, list[dict]],
             fail: Callable[[str, str, str], None]) -> dict:
    """One section of a page: its rows, units, chart and tables; or the error that stopped it."""
    item = {"section": section, "rows": [], "extra_rows": [], "chart_spec": None, "tables": [], "error": None,
            "findings": []}
    stage = f"reading its rows from the view {section.view}"
    try:
        item["rows"] = fetch(section.query)
        if section.extra_query:
            stage = f"reading its second table from the view {section.extra_view}"
            item["extra_rows"] = fetch(section.extra_query)
        stage = "choosing its units"
        units = choose_units([(section.columns, item["rows"]), (section.extra_columns, item["extra_rows"]),
                              (section.drawn, item["rows"])])
        stage = "building its tables"
        columns = shown_columns(section.columns, item["rows"])
        extra_columns = shown_columns(section.extra_columns, item["rows"])
        if columns and item["rows"]:
            item["tables"].append(table(f"{section.id}-table", columns, item["rows"], units))
        if extra_columns and item["extra_rows"]:
            item["tables"].append(table(f"{section.id}-extra-table", extra_columns, item["extra_rows"], units))
        stage = "drawing its chart"
        data = SectionData(item["rows"], caches, derived, units, item["extra_rows"])
        item["chart_spec"] = section.chart(data)
        if section.findings:
            stage = "stating its findings"
            item["findings"] = section.findings(data)
    except Exception as error:  # noqa: BLE001 - one section must not stop the page or the fleet
        item["error"] = {"stage": stage, "text": _error_text(error)}
        fail(f"section {section.id}", stage, item["error"]["text"])
    return item


def _sections(fetch: Callable[[str], list[dict]], caches: list[dict], experiments: list[dict],
              derived: dict[str, list[dict]], fail: Callable[[str, str, str], None]) -> list[dict]:
    """The run's sections: the latency curve always, every other section when the run has its experiment (with
    the experiment's status and notes when it drew nothing). An experiment with several sections (MLC) shows
    its status and notes once, in its first; a further section of it appears only when it has rows."""
    ran = {experiment["experiment"]: experiment for experiment in experiments}
    shown, items = set(), []
    for section in SECTIONS:
        if section.experiment not in ran and section is not SECTIONS[0]:
            continue
        item = _section(fetch, section, caches, derived, fail)
        if section.experiment in shown and not item["rows"] and not item["extra_rows"] and not item["error"]:
            continue
        item.update(experiment=ran.get(section.experiment), first_of_experiment=section.experiment not in shown,
                    flags=_flags_of(section, derived["flags"]))
        items.append(item)
        shown.add(section.experiment)
    return items


def _derived_tables(derived: dict[str, list[dict]], shown_sections: set[str]) -> list[dict]:
    """The derived tables with rows, each with the section it was inferred from (when that is on the page)."""
    items = []
    for derived_table in SHOWN_TABLES:
        rows = derived[derived_table.name]
        if not derived_table.columns or not rows:
            continue
        columns = shown_columns(derived_table.columns, rows)
        units = choose_units([(columns, rows)])
        items.append({"table": derived_table, "data": table(derived_table.html_id, columns, rows, units),
                      "section": derived_table.section if derived_table.section in shown_sections else None})
    return items


def _toc(sections: list[dict], derived_tables: list[dict]) -> list[dict]:
    """The table of contents: each family with the sections this page has, then the fixed parts."""
    on_page = {item["section"].id: item for item in sections}
    toc = []
    for family in FAMILIES:
        entries = [{"id": section.id, "title": section.title, "error": bool(on_page[section.id]["error"]),
                    "flagged": len(on_page[section.id]["flags"])}
                   for section in family.sections if section.id in on_page]
        if entries:
            toc.append({"title": family.title, "entries": entries})
    if derived_tables:
        toc.append({"title": "Inferred", "entries": [{"id": item["table"].html_id, "title": item["table"].title,
                                                      "error": False, "flagged": 0} for item in derived_tables]})
    toc.append({"title": "Checks and environment", "entries": [
        {"id": part_id, "title": title, "error": False, "flagged": 0}
        for part_id, title in (("flags", "Plausibility flags"), ("plan", "Plan and price"), ("experiments", "Experiments"),
                               ("knobs", "Knobs"), ("environment", "Environment"), ("runs", "Runs of this host"),
                               ("raw-data", "Raw data"))]})
    return toc


def _plan(fetch: Callable[[str], list[dict]], fail: Callable[[str, str, str], None]) -> dict | None:
    try:
        return plan.build(fetch)
    except Exception as error:  # noqa: BLE001 - the rest of the page is still drawn
        fail("plan", "the plan beside what the run did", _error_text(error))
        return None


def host_page_context(fetch: Callable[[str], list[dict]], run: dict, runs: list[dict],
                      fail: Callable[[str, str, str], None]) -> dict:
    """The template variables of one run's page (`fetch(query)`: the run's rows of a report query); a part
    that cannot be built is reported to `fail(part, what, error)` and shown as an error box in its place."""
    facts_rows = fetch("run_facts")
    facts = facts_rows[0] if facts_rows else {"facts": "{}"}
    caches = fetch("cache_levels")
    experiments = fetch("experiments")
    derived = derived_rows(fetch)
    sections = _sections(fetch, caches, experiments, derived, fail)
    shown = {item["section"].id for item in sections}
    derived_tables = _derived_tables(derived, shown)
    bundle_path = Path(run["bundle_path"])
    return {
        "run": run,
        "runs": runs,
        "summary": summary.build(fetch, run, facts, experiments, derived, sections, fail),
        "toc": _toc(sections, derived_tables),
        "facts": flatten_facts(json.loads(facts["facts"])),
        "caches": caches,
        "knobs": fetch("knob_values"),
        "experiments": experiments,
        "plan": _plan(fetch, fail),
        "sections": sections,
        "derived_tables": derived_tables,
        "flags": derived["flags"],
        "inference": run["inference_version"],
        "raw_path": bundle_path / "raw",
        "raw_present": (bundle_path / "raw").is_dir(),
        "bundle_present": bundle_path.is_dir(),
    }


# ---- the output folder ---------------------------------------------------------------------------------

def _shown(value: object) -> object:
    """What a page shows of a value: text with its control and bidirectional characters escaped (a NUL, an
    override that reorders what the reader sees), a number that is not finite as NOT_FINITE."""
    if isinstance(value, str):
        escaped = visible(value)
        if escaped == value:
            return value
        return Markup(escaped) if isinstance(value, Markup) else escaped  # escaping adds no markup
    if isinstance(value, float) and not math.isfinite(value):
        return NOT_FINITE
    return value


def _for_script(value: object) -> object:
    """A chart's data as JSON can carry it: texts as _shown, numbers that are not finite as null (JSON has no
    Infinity, and the browser's parser refuses the whole spec for one)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {_for_script(key): _for_script(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_for_script(item) for item in value]
    return value


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PAGE_TEMPLATES_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    environment.filters.update(bytes=format_bytes, count=format_count, with_unit=format_with_unit, percent=format_percent,
                               readable=readable_text)
    environment.policies["json.dumps_function"] = lambda value, **options: json.dumps(
        _for_script(value), allow_nan=False, **options)
    return environment


def _renderer_hash() -> str:
    """A hash of everything that shapes a page besides its data: this package's code, the templates, the
    report's queries and the views they read."""
    digest = hashlib.sha256(__version__.encode())
    package = PACKAGE_DIR
    for folder, pattern in ((package, "**/*.py"), (PAGE_TEMPLATES_DIR, "*.j2"), (QUERIES_DIR / "report", "*.sql"),
                            (WAREHOUSE_DIR / "views", "*.sql")):
        for path in sorted(folder.glob(pattern)):
            digest.update(path.relative_to(folder).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _write_vega_asset(out_dir: Path) -> str:
    """Write the vega, vega-lite and vega-embed bundle once, named by the vl-convert release that ships it
    (an existing file is kept); return its path relative to the output folder."""
    name = f"{ASSETS_DIR}/vega-embed-vl-convert-{vl_convert.__version__}.js"
    path = out_dir / name
    if not path.is_file():
        _write_atomically(path, _vega_bundle(Path(name).name))
    return name


def vega_cache_dir() -> Path | None:
    """Where the Vega bundle is kept between reports: FLEETSCOPE_CACHE_DIR, else the XDG cache folder (None
    where there is no home folder to hold it)."""
    chosen = os.environ.get("FLEETSCOPE_CACHE_DIR")
    if chosen:
        return Path(chosen)
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fleetscope"
    except RuntimeError:
        return None


def _vega_bundle(file_name: str) -> bytes:
    """vl-convert builds the bundle in about 3 s of CPU, the same bytes for a release, and every report into a
    new folder needs it: it is kept in this user's cache folder, named by the release. A cached file is used only
    when it is a regular file this user owns that nobody else may write (a shared folder given as the cache
    cannot hand pages someone else's script); a cache that cannot be written costs only the build."""
    folder = vega_cache_dir()
    cached = folder / file_name if folder else None
    try:
        status = cached.lstat() if cached else None
        if status and stat.S_ISREG(status.st_mode) and status.st_uid == os.geteuid() and not status.st_mode & 0o022:
            return cached.read_bytes()
    except OSError:
        pass
    bundle = vl_convert.javascript_bundle().encode("utf-8")
    if cached:
        partial = None
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            # a partial file of its own: two reports filling the cache at once never write one file together
            with tempfile.NamedTemporaryFile(dir=cached.parent, prefix=f".{file_name}.", delete=False) as partial:
                partial.write(bundle)
            Path(partial.name).replace(cached)
        except OSError:
            if partial is not None:
                Path(partial.name).unlink(missing_ok=True)
    return bundle


def _write_atomically(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(content)
    partial.replace(path)


def _write_fleet_asset(out_dir: Path) -> str:
    """Write the fleet page's script (templates/report/fleet.js) under a name made of its content's hash,
    removing the script of an earlier fleetscope; return its path relative to the output folder."""
    content = (PAGE_TEMPLATES_DIR / "fleet.js").read_bytes()
    name = f"{ASSETS_DIR}/fleet-{hashlib.sha256(content).hexdigest()[:12]}.js"
    if not (out_dir / name).is_file():
        _write_atomically(out_dir / name, content)
    for old in (out_dir / ASSETS_DIR).glob("fleet-*.js"):
        if old.name != Path(name).name:
            old.unlink()
    return name


@dataclass
class Previous:
    """What the last report wrote here: its Vega asset, each page's key, each page's summary (what the
    fleet page shows of its run) and the fleet page's key."""
    asset: str | None = None
    pages: dict[str, str] = field(default_factory=dict)
    summaries: dict[str, dict] = field(default_factory=dict)
    index: str | None = None


def _read_manifest(out_dir: Path) -> Previous:
    """The last report's manifest (nothing if it is unreadable)."""
    try:
        manifest = json.loads((out_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Previous()
    if not isinstance(manifest, dict) or not isinstance(manifest.get("pages"), dict):
        return Previous()
    asset = manifest.get("asset")
    summaries = manifest.get("summaries") if isinstance(manifest.get("summaries"), dict) else {}
    return Previous(
        asset if isinstance(asset, str) and re.fullmatch(rf"{ASSETS_DIR}/vega-[\w.-]+\.js", asset) else None,
        {page: key for page, key in manifest["pages"].items() if isinstance(page, str) and isinstance(key, str)},
        {page: record for page, record in summaries.items() if isinstance(record, dict)},
        manifest.get("index") if isinstance(manifest.get("index"), str) else None)


def _page_key(renderer: str, asset: str, run: dict, runs: list[dict]) -> str:
    bundle_path = Path(run["bundle_path"])
    identity = {
        "renderer": renderer, "asset": asset, "run": [run["run_id"], run["host"], run["content_sha256"],
                                                      str(run["loaded_at"]), run["inference_version"],
                                                      str(run["inferred_at"])],
        "runs": [[other["run_id"], other["status"], str(other["started_at"]), other["profile"], other["page"],
                  other["experiments_ok"], other["experiments_failed"], other["experiments_skipped"],
                  other["point_count"]] for other in runs],
        "bundle": [bundle_path.is_dir(), (bundle_path / "raw").is_dir()],
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def _write_host_page(out_dir: Path, environment: jinja2.Environment, template: jinja2.Template, common: dict,
                     asset: str, batch: Batch, run: dict, runs: list[dict], is_latest: bool
                     ) -> tuple[list[Failure], dict | None]:
    """Render and write one run's page; return what could not be drawn on it and what the fleet page shows
    of the run (None when the page could not be rendered)."""
    name = run["page"]
    depth = "../" * name.count("/")
    key = (run["run_id"], run["host"])
    failures: list[Failure] = []

    def fail(part: str, what: str, error: str) -> None:
        failures.append(Failure(name, part, what, error))

    def fetch(query: str) -> list[dict]:
        return batch.rows(query, key)

    summary_record = None
    try:
        context = host_page_context(fetch, run, runs, fail)
        html = template.render(**common, **context, is_latest=is_latest, root=depth, vega_script=depth + asset)
    except Exception as error:  # noqa: BLE001 - one host's page must not stop the fleet's
        fail("page", "rendering the page", _error_text(error))
        html = environment.get_template("failed.html.j2").render(**common, run=run, failure=failures[-1], root=depth)
    else:
        try:
            summary_record = fleet_pages.run_summary(
                fetch, {**context["summary"]["values"], **fleet.flag_values(context["flags"])}, is_latest)
        except Exception as error:  # noqa: BLE001 - the host's page is written; the fleet shows no numbers for it
            fail("fleet summary", "reading the curves the fleet page overlays", _error_text(error))
    _write_atomically(out_dir / name, html.encode("utf-8"))
    return failures, summary_record


def _index_key(renderer: str, assets: tuple[str, str], hosts: list[dict], runs_by_host: dict[str, list[dict]],
               pages: dict[str, str], refused: list[dict]) -> str:
    """What the fleet page shows depends on: the renderer, its scripts, each host's latest and previous run
    (their pages' keys stand for their summaries) and the refused bundles."""
    shown = [[host["host"], *[[run["page"], pages[run["page"]]] for run in runs_by_host[host["host"]][:2]]]
             for host in hosts]
    identity = {"renderer": renderer, "assets": assets, "hosts": shown, "refused": refused}
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


@dataclass
class ReportResult:
    written: list[Path] = field(default_factory=list)     # pages written now (index.html last)
    unchanged: list[Path] = field(default_factory=list)   # pages whose data had not changed
    removed: list[Path] = field(default_factory=list)     # pages of runs no longer in the warehouse
    failures: list[Failure] = field(default_factory=list)


def write_reports(connection: duckdb.DuckDBPyConnection, out_dir: Path, *, rewrite_all: bool = False) -> ReportResult:
    """Write index.html and every host run's page whose data changed since the last report into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result = ReportResult()
    environment = _environment()
    asset = _write_vega_asset(out_dir)
    fleet_asset = _write_fleet_asset(out_dir)
    renderer = _renderer_hash()
    common = {"generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "fleetscope_version": __version__}
    previous = _read_manifest(out_dir)
    if previous.asset not in (None, asset) and (out_dir / previous.asset).is_file():
        (out_dir / previous.asset).unlink()  # the script of an earlier fleetscope: no page loads it any more
    if rewrite_all:
        previous = Previous()
    pages: dict[str, str] = {}
    summaries: dict[str, dict] = {}
    runs_by_host: dict[str, list[dict]] = defaultdict(list)
    for run in records(connection, sql("report/runs"), []):
        runs_by_host[run["host"]].append(run)
    hosts = records(connection, sql("report/fleet_overview"), [])
    host_template = environment.get_template("host.html.j2")
    stale = []
    for host in hosts:
        runs = runs_by_host[host["host"]]
        for run in runs:
            run["page"] = page_path(run["host"], run["run_id"], host["last_run_id"])
        host["page"] = runs[0]["page"]
        for run in runs:
            pages[run["page"]] = _page_key(renderer, asset, run, runs)
            if (previous.pages.get(run["page"]) == pages[run["page"]] and (out_dir / run["page"]).is_file()
                    and run["page"] in previous.summaries):
                result.unchanged.append(out_dir / run["page"])
                summaries[run["page"]] = previous.summaries[run["page"]]
            else:
                stale.append((run, runs, run["run_id"] == host["last_run_id"]))
    for start in range(0, len(stale), BATCH_RUNS):
        chunk = stale[start:start + BATCH_RUNS]
        batch = Batch(connection, [(run["run_id"], run["host"]) for run, _unused, _unused in chunk])
        for run, runs, is_latest in chunk:
            failures, summary_record = _write_host_page(out_dir, environment, host_template, common, asset, batch,
                                                        run, runs, is_latest)
            result.written.append(out_dir / run["page"])
            result.failures.extend(failures)
            if summary_record is not None:
                summaries[run["page"]] = summary_record
            if failures:
                pages[run["page"]] = ""  # drawn again by the next report
    for name in sorted(set(previous.pages) - set(pages)):  # runs no longer in the warehouse
        gone = out_dir / name
        if gone.is_file():
            gone.unlink()
            result.removed.append(gone)
            if gone.parent != out_dir and not any(gone.parent.iterdir()):
                gone.parent.rmdir()
    refused = records(connection, sql("report/refused_bundles"), [])
    index_key = _index_key(renderer, (asset, fleet_asset), hosts, runs_by_host, pages, refused)
    index = out_dir / "index.html"
    if previous.index == index_key and index.is_file():
        result.unchanged.append(index)
    else:
        latest = {host["host"]: summaries.get(host["page"]) for host in hosts}
        before = {host["host"]: summaries.get(runs_by_host[host["host"]][1]["page"])
                  if len(runs_by_host[host["host"]]) > 1 else None for host in hosts}
        _write_atomically(index, environment.get_template("index.html.j2").render(
            **common, hosts=hosts, refused=refused, root="", vega_script=asset, fleet_script=fleet_asset,
            fleet=fleet_pages.fleet_context(hosts, before, latest,
                                            changed_since_previous(connection, runs_by_host, before, latest))
        ).encode("utf-8"))
        result.written.append(index)
    _write_atomically(out_dir / MANIFEST_NAME, json.dumps(
        {"fleetscope_version": __version__, "asset": asset, "pages": pages, "summaries": summaries,
         "index": index_key}, sort_keys=True, separators=(",", ":")).encode("utf-8"))
    return result


def changed_since_previous(connection: duckdb.DuckDBPyConnection, runs_by_host: dict[str, list[dict]],
                           before: dict[str, dict | None], latest: dict[str, dict | None]) -> dict[str, list[str]]:
    """The figures of each host's latest run that moved from its previous run by `fleetscope check`'s default
    rule (fleetscope.report.check), in words; hosts with one run, or a run without a summary, have none."""
    pairs = {}
    for host, runs in runs_by_host.items():
        if len(runs) > 1 and (before.get(host) or {}).get("values") and (latest.get(host) or {}).get("values"):
            pairs[host] = [fleet.Run(run["host"], run["run_id"], run["started_at"], run["status"], recency, "", False,
                                     None, None, run.get("origin") == "reference") for recency, run in ((2, runs[1]), (1, runs[0]))]
    if not pairs:
        return {}
    samples = fleet.level_samples(connection, [run.key for runs in pairs.values() for run in runs])
    return {host: [check.describe(figure)
                   for figure in check.moved_since_previous(before[host]["values"], latest[host]["values"], samples,
                                                            previous_run, latest_run)]
            for host, (previous_run, latest_run) in pairs.items()}


def write_compare_page(out: Path, context: dict, threshold: float, alpha: float) -> Path:
    """Write `fleetscope compare`'s page (fleetscope.report.fleet_pages.compare_context) to `out`, with the charts'
    script under assets/ beside it; link the fleet page when `out` sits beside one."""
    asset = _write_vega_asset(out.parent)
    html = _environment().get_template("compare.html.j2").render(
        compare=context, threshold=threshold, alpha=alpha, vega_script=asset, root="",
        fleet_page="index.html" if (out.parent / "index.html").is_file() else None,
        generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), fleetscope_version=__version__)
    _write_atomically(out, html.encode("utf-8"))
    return out
