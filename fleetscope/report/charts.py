"""Pieces every experiment's chart is built from: Vega-Lite specs written as plain dicts (building them
through Altair cost more than the rest of a page), log-2 size axes labelled in KiB/MiB/GiB, cache-size
rules from sysfs, inferred-level bands, bars with their 95% CI as error bars and lines with their CI as a
band; and on a host with more than one core kind (hybrid P/E cores, Arm big.LITTLE), each kind's
series named by its kind (`core_kinds`, `kind_series`).

Charts never put a value that is missing or not positive on a log scale (Vega then draws NaN or warns
"Log scale domain includes zero"): `drawable` keeps the records whose measured values can be drawn and
the chart says how many it left out; a coordinate from the kernel's parameters (working set, queue
depth) that is missing or not positive makes the bundle malformed, and `require_positive` raises
ChartError saying so (the page shows it in the section's error box).
"""

from __future__ import annotations

import math

from fleetscope.units import format_size

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
# Vega expression turning a byte count on an axis into a KiB/MiB/GiB label.
BYTES_LABEL_EXPR = (
    "datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB'"
    " : datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB'"
    " : datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB'"
    " : datum.value + ' B'"
)
# d3 formats: plain decimals with about three significant digits, never scientific notation.
NUMBER = ",.3~r"
WHOLE = ",d"
RULE_GREY, LEVEL_COLOR = "#777", "#c2410c"
# A legend for lines drawn over their CI band: solid strokes, not the band's faint fill.
LINE_LEGEND = {"symbolType": "stroke", "symbolOpacity": 1}
# A strokeDash legend that shows its dashes: Vega draws such a legend's symbols with no stroke of their own.
DASH_LEGEND = {"symbolType": "stroke", "symbolStrokeWidth": 2, "symbolSize": 300,
               "encode": {"symbols": {"update": {"stroke": {"value": "#555"}}}}}
SOLID, DASHED = [1, 0], [5, 3]


class ChartError(ValueError):
    """The rows hold values a chart cannot place: the message says which and why."""


# ---- encodings -----------------------------------------------------------------------------------------

def q(field: str, title: str | None = None, **properties) -> dict:
    """A quantitative field."""
    return {"field": field, "type": "quantitative", **({"title": title} if title is not None else {}), **properties}


def n(field: str, title: str | None = None, **properties) -> dict:
    """A nominal field."""
    return {"field": field, "type": "nominal", **({"title": title} if title is not None else {}), **properties}


def o(field: str, title: str | None = None, **properties) -> dict:
    """An ordinal field."""
    return {"field": field, "type": "ordinal", **({"title": title} if title is not None else {}), **properties}


def tip(field: str, title: str | None = None, *, number: bool = True, whole: bool = False) -> dict:
    """A tooltip entry: numbers in the page's format, other values as they are."""
    if not number:
        return n(field, title)
    return q(field, title, format=WHOLE if whole else NUMBER)


# Ticks a log-2 axis labels at most: a full-width chart's, and a half-width one's (the fleet and compare pages
# put two charts side by side, where '16,384' and '8,192' an octave apart run into each other).
MAX_TICKS, HALF_WIDTH_TICKS = 17, 9


def log2_axis(values: list[float], field_name: str, title: str, *, as_bytes: bool, max_ticks: int = MAX_TICKS) -> dict:
    """A log-2 x encoding over `values` (all > 0) with a tick per octave, or per two or more where that would
    be more than `max_ticks` ticks."""
    low = math.floor(math.log2(min(values)))
    high = max(math.ceil(math.log2(max(values))), low + 1)
    step = max(1, math.ceil((high - low + 1) / max_ticks))
    axis = {"values": [2**exponent for exponent in range(low, high + 1, step)], "grid": False,
            **({"labelExpr": BYTES_LABEL_EXPR} if as_bytes else {"format": WHOLE})}
    return q(field_name, title, scale={"type": "log", "base": 2, "domain": [2**low, 2**high]}, axis=axis)


def log_scale(values: list[float]) -> dict:
    """A log-10 scale padded to whole decades around `values` (all > 0)."""
    low, high = min(values), max(values)
    domain = [10 ** math.floor(math.log10(low)), 10 ** math.ceil(math.log10(high))]
    if domain[0] == domain[1]:
        domain[1] *= 10
    return {"type": "log", "domain": domain, "nice": False}


# A heat map's colours span at least this share of its largest value: two cells that differ by less than the
# noise of a c2c pair (0.5 %: '166 ns' and '166 ns') read as one colour, not as the two ends of the scale.
HEAT_MIN_SPAN = 0.1


def heat_domain(values: list[float]) -> list[float]:
    """The colour domain of a heat map over `values`: their range, widened about its middle to at least
    HEAT_MIN_SPAN x the largest magnitude."""
    low, high = min(values), max(values)
    span = HEAT_MIN_SPAN * max(abs(low), abs(high))
    if high - low < span:
        middle = (low + high) / 2
        low, high = middle - span / 2, middle + span / 2
    return [low, high]


def heat_map(chart: Chart, data: dict, *, x: dict, y: dict, field: str, title: str, values: list[float],
             tooltip: list[dict], labels: bool) -> None:
    """Cells coloured by `field` on viridis over heat_domain(values), and with `labels` each cell's figure written
    on it (black on the light half of the scale, white on the dark)."""
    domain = heat_domain(values)
    chart.layer(data, "rect", x=x, y=y, tooltip=tooltip,
                color=q(field, title, scale={"scheme": "viridis", "domain": domain}, legend={"format": NUMBER}))
    if labels:
        chart.layer(data, "text", x=x, y=y, text=q(field, format=NUMBER),
                    color={"condition": {"test": f"datum[{field!r}] > {sum(domain) / 2!r}", "value": "black"},
                           "value": "white"})


def whole_ticks(values: list[float], max_ticks: int = HALF_WIDTH_TICKS) -> dict:
    """An axis labelled at whole numbers from the smallest to the largest of `values` (every one, or every
    second, third ... so that at most `max_ticks` show): never a tick at 1.5 threads, which ',d' would print as
    '2' (Vega's tickMinStep does not stop it)."""
    low, high = math.floor(min(values)), math.ceil(max(values))
    step = max(1, math.ceil((high - low + 1) / max_ticks))
    return {"values": list(range(low, high + 1, step)), "format": WHOLE}


def whole_axis(values: list[int]) -> dict:
    """An axis labelled at exactly these whole numbers (thread counts, chains): no 1.5 between 1 and 2."""
    return {"values": sorted(set(values)), "format": WHOLE, "grid": False}


# ---- records -------------------------------------------------------------------------------------------

def require_positive(records: list[dict], key: str, what: str) -> None:
    """Raise ChartError unless every record's `key` (a coordinate taken from the kernel's parameters, e.g. a
    working set or a queue depth) is a number above zero: such a point is malformed, not noisy."""
    bad = [record.get(key) for record in records
           if not (isinstance(record.get(key), (int, float)) and math.isfinite(record[key]) and record[key] > 0)]
    if bad:
        shown = ", ".join(sorted({repr(value) for value in bad})[:3])
        raise ChartError(f"{len(bad)} of {len(records)} points have no {what} above zero ({shown}): "
                         f"the {what} axis cannot place them")


def drawable(records: list[dict], *keys: str, log: bool) -> tuple[list[dict], int]:
    """The records whose measured `keys` are all finite numbers (and above zero on a `log` scale), and how
    many were not: a noisy difference can be negative; the chart leaves such a point out and says so."""
    kept = [record for record in records
            if all(isinstance(record.get(key), (int, float)) and math.isfinite(record[key])
                   and (record[key] > 0 or not log) for key in keys)]
    return kept, len(records) - len(kept)


def left_out(count: int, what: str) -> str:
    return f"; {count} {what} without a drawable value left out" if count else ""


# ---- core kinds ----------------------------------------------------------------------------------------

def core_kinds(rows: list[dict]) -> list[str]:
    """The core kinds the rows were measured on (their `core_kind`), fastest first as the report queries order
    them. The queries name a kind only on a host with more than one (hybrid P/E cores, Arm big.LITTLE), so on
    a host with one kind this is [] and its charts and tables stay as they were. A value naming several kinds
    ('P-core + E-core': threads that ran on both) is a kind of its own here."""
    return [kind for kind, _unused in by_core_kind(rows) if kind]


def kind_series(kinds: list[str], row: dict, label: str | None = None) -> str | None:
    """A row's series on a chart: where the rows hold several kinds its kind leads ('E-core · thp', or the kind
    alone where the chart had one series); elsewhere `label` unchanged."""
    if len(kinds) < 2:
        return label
    kind = row.get("core_kind") or "kind unknown"
    return f"{kind} · {label}" if label else kind


def kind_field(kinds: list[str], row: dict) -> dict:
    """A record's field "core kind" (the one kind_color encodes) where the rows hold several kinds; {} elsewhere,
    so a host with one kind draws the records it drew before."""
    return {"core kind": kind_series(kinds, row)} if len(kinds) > 1 else {}


def kind_sort(kinds: list[str], records: list[dict], field: str) -> dict:
    """The legend order of kind_series' names where the rows hold several kinds: as the records come, which is
    the report queries' order, fastest kind first ({} elsewhere: Vega's own order, as before)."""
    return {"sort": list(dict.fromkeys(record[field] for record in records))} if len(kinds) > 1 else {}


def kind_title(kinds: list[str], title: str | None = None) -> str | None:
    """The legend title over kind_series' names ('kind · page policy': Vega cuts a legend title at 180 px)."""
    if len(kinds) < 2:
        return title
    return f"kind · {title}" if title else "core kind"


def kind_color(kinds: list[str], legend: dict | None = None) -> dict:
    """A colour encoding over the field "core kind" (kind_series' names), fastest kind first, where the rows
    hold several kinds; {} elsewhere. The legend is a line chart's unless `legend` says otherwise."""
    if len(kinds) < 2:
        return {}
    return {"color": n("core kind", "core kind", sort=kinds, legend=legend or LINE_LEGEND)}


def kind_dash(kinds: list[str]) -> dict:
    """Solid lines for the fastest kind, dashed for the next, over the field "core kind", where the rows hold
    several kinds ({} elsewhere): for a chart whose colours already name many series (bandwidth's ops), so each
    op keeps its colour across kinds. Its CI bands take the field as their `detail`; the subtitle
    (kinds_note(dashed=True)) says which kind is solid."""
    if len(kinds) < 2:
        return {}
    # no legend: Vega draws a dash legend's symbols without a stroke; kinds_note(dashed=True) says which is which
    return {"strokeDash": n("core kind", "core kind", sort=kinds, legend=None)}


def kinds_note(kinds: list[str], *, sysfs_rules: bool = False, dashed: bool = False) -> str:
    """What a chart's subtitle adds on a host with several kinds: each kind measured on its own CPU and, for a
    chart with sysfs rules, whose caches those are (the facts' caches are the fastest kind's), and for one with
    kind_dash which kind is solid; or the one kind the rows were measured on."""
    if not kinds:
        return ""
    if len(kinds) == 1:
        return f"; measured on {kinds[0]} CPUs only (this host has more than one core kind)"
    rules = f"; grey rules: the {kinds[0]}'s caches" if sysfs_rules else ""
    # a line of its own: the subtitles it follows fill the width already
    series = f"solid: {kinds[0]}, dashed: {', '.join(kinds[1:])}" if dashed else "one series per core kind"
    return f"\n{series}, each measured on its own CPU ({', '.join(kinds)}){rules}"


# ---- a chart -------------------------------------------------------------------------------------------

class Chart:
    """One Vega-Lite spec being built: named datasets (each stored once in the spec) and its layers."""

    def __init__(self) -> None:
        self.datasets: dict[str, list[dict]] = {}
        self.layers: list[dict] = []

    def data(self, records: list[dict]) -> dict:
        """A named dataset of `records`, their measured values kept to four significant digits (a chart
        shows three; more would only make the page heavier)."""
        name = f"data-{len(self.datasets)}"
        self.datasets[name] = [{key: float(f"{value:.4g}") if isinstance(value, float) and math.isfinite(value)
                                else value for key, value in record.items()} for record in records]
        return {"name": name}

    def layer(self, data: dict | list[dict], mark: str | dict, **encoding) -> Chart:
        """Add a layer: `data` is a dataset from `data()` or records; `mark` a type or a mark dict."""
        self.layers.append({"data": data if isinstance(data, dict) else self.data(data),
                            "mark": mark if isinstance(mark, dict) else {"type": mark}, "encoding": encoding})
        return self

    def spec(self, title: str, subtitle: str, height: int = 280, *, width: int | str = "container",
             facet: dict | None = None, columns: int | None = None, resolve: dict | None = None) -> dict:
        """The whole spec: the layers (one panel per value of `facet`, if given) under the page's title. A
        dataset that one layer alone reads is written inline in it; a shared one once, under "datasets"."""
        uses: dict[str, int] = {}
        for layer in self.layers:
            uses[layer["data"]["name"]] = uses.get(layer["data"]["name"], 0) + 1
        for layer in self.layers:
            # a name that is not one of this chart's datasets is data the page supplies when it draws
            if uses[layer["data"]["name"]] == 1 and layer["data"]["name"] in self.datasets:
                layer["data"] = {"values": self.datasets.pop(layer["data"]["name"])}
        body = self.layers[0] if len(self.layers) == 1 else {"layer": self.layers}
        body = {**body, "width": width, "height": height}
        if facet is not None:
            data = body.pop("data") if "data" in body else None
            body = {"facet": facet, "spec": body, **({"columns": columns} if columns else {}),
                    **({"data": data} if data else {}), **({"resolve": resolve} if resolve else {})}
        # a subtitle with line breaks is one line each (Vega does not break a string)
        lines = subtitle.split("\n") if "\n" in subtitle else subtitle
        return {"$schema": SCHEMA, **body, "title": {"text": title, "subtitle": lines, "anchor": "start"},
                **({"datasets": self.datasets} if self.datasets else {}),
                "config": {"numberFormat": NUMBER, "customFormatTypes": False}}


# ---- marks shared by several charts --------------------------------------------------------------------

def cache_marks(caches: list[dict]) -> list[dict]:
    """One labelled size per data/unified cache level from sysfs: L1d, L2, L3 ..."""
    marks = {}
    for cache in caches:
        if cache["type"] == "Instruction" or not cache["size_bytes"] or cache["size_bytes"] <= 0:
            continue
        label = f"L{cache['level']}d" if cache["type"] == "Data" else f"L{cache['level']}"
        marks[(label, cache["size_bytes"])] = {"label": f"{label} (sysfs)", "size_bytes": cache["size_bytes"]}
    return sorted(marks.values(), key=lambda mark: mark["size_bytes"])


def sysfs_rules(chart: Chart, marks: list[dict]) -> None:
    """Grey dashed rules at the sysfs cache sizes, labelled at the top of the plot."""
    if marks:
        data = chart.data(marks)
        chart.layer(data, {"type": "rule", "color": RULE_GREY, "strokeDash": [2, 2]}, x=q("size_bytes"))
        chart.layer(data, {"type": "text", "align": "left", "dx": 3, "baseline": "top", "y": 2, "color": "#444"},
                    x=q("size_bytes"), text=n("label"))


def by_core_kind(rows: list[dict]) -> list[tuple[str | None, list[dict]]]:
    """Rows of a per-kind derived table (inferred_levels, inferred_tlb ..., fastest kind first as the report
    queries order them) per core kind: [(kind, its rows)]. A host with one kind has one group, kind None."""
    kinds: dict[str | None, list[dict]] = {}
    for row in rows:
        kinds.setdefault(row.get("core_kind"), []).append(row)
    return list(kinds.items())


def fastest_kind(rows: list[dict]) -> list[dict]:
    """The rows of the fastest core kind measured (all of them on a host with one kind): a figure that has
    room for one hierarchy shows that one, never a blend of two kinds."""
    kinds = by_core_kind(rows)
    return kinds[0][1] if kinds else []


def one_policy(levels: list[dict]) -> list[dict]:
    """The inferred levels (rows of inferred_levels) of one page policy, THP when the run has it, of the
    fastest core kind: a chart marks one set of levels, not one per policy or kind."""
    levels = fastest_kind(levels)
    policies = [level["page_policy"] for level in levels]
    policy = "thp" if "thp" in policies else (policies[0] if policies else None)
    return [level for level in levels if level["page_policy"] == policy and level.get("level")]


def level_size_text(row: dict) -> str | None:
    """A level's size as people read it, to the precision its bracket has: '32–35 KiB · sysfs 32 KiB', a coarse
    curve's '32–64 KiB' (fleetscope.units.format_size); a row from before brackets (method version 5 and older,
    not yet recomputed) has its effective size alone."""
    return format_size(row.get("size_low_bytes"), row.get("size_high_bytes"), row.get("capacity_bytes"),
                       row.get("size_method")) or None


def level_marks(chart: Chart, levels: list[dict]) -> None:
    """The inferred cache levels: a band over each level's rise [onset, completion] and a rule at its size (the
    best estimate, else the middle of its bracket), labelled with the bracket and estimate at the bottom of the
    plot."""
    records = [{"level": level["level"], "onset": level["onset_bytes"], "completion": level["completion_bytes"],
                "capacity": level["capacity_bytes"] or math.sqrt(level["size_low_bytes"] * level["size_high_bytes"]),
                "label": f"{level['level']} {level_size_text(level)}"}
               for level in levels if (level.get("capacity_bytes") or level.get("size_low_bytes"))
               and level.get("level") != "DRAM"]
    records, _unused = drawable(records, "onset", "completion", "capacity", log=True)
    if not records:
        return
    data = chart.data(records)
    chart.layer(data, {"type": "rect", "color": LEVEL_COLOR, "opacity": 0.08}, x=q("onset"), x2={"field": "completion"},
                tooltip=[tip("label", "inferred level", number=False), tip("onset", "rise from (B)", whole=True),
                         tip("completion", "rise to (B)", whole=True)])
    chart.layer(data, {"type": "rule", "color": LEVEL_COLOR, "opacity": 0.7}, x=q("capacity"))
    # a bracket with its estimate is a long label: stacked in rows where two would overprint
    bottom_labels(chart, records, "capacity", LEVEL_COLOR)


def ci_band(chart: Chart, records: list[dict], *, x: dict, color: dict, opacity: float = 0.15,
            detail: dict | None = None) -> None:
    """A shaded 95% CI band (ci_low .. ci_high) under each line, over the records that have one (one band per
    colour, and per `detail` where the lines are told apart by more than their colour)."""
    with_ci = [record for record in records if record["ci_low"] is not None and record["ci_high"] is not None]
    if with_ci:
        chart.layer(with_ci, {"type": "area", "opacity": opacity}, x=x, y=q("ci_low"), y2={"field": "ci_high"},
                    color=color, **({"detail": detail} if detail else {}))


def bars_with_ci(chart: Chart, records: list[dict], *, x: str, x_title: str, y: str, y_title: str,
                 low: str | None, high: str | None, group: str | None = None, group_title: str = "",
                 sort: list | None = None, tooltip: list | None = None) -> None:
    """Bars (grouped by `group` side by side) from zero on a linear scale, with their 95% CI as error bars."""
    x_encoding = n(x, x_title, sort=sort, axis={"labelAngle": 0})
    grouping = {"xOffset": n(group), "color": n(group, group_title)} if group else {}
    data = chart.data(records)
    chart.layer(data, "bar", x=x_encoding, y=q(y, y_title, axis={"format": NUMBER}), tooltip=tooltip or [], **grouping)
    if low and high and any(record.get(low) is not None and record.get(high) is not None for record in records):
        chart.layer(data, {"type": "rule", "color": "#222"}, x=x_encoding, y=q(low), y2={"field": high},
                    **({"xOffset": n(group)} if group else {}))


# Labels of rules at the bottom of a log-2 axis: at least this many octaves apart to share a row (a label is about
# two octaves wide on a half-page chart).
LABEL_ROW_OCTAVES = 3
LABEL_ROW_PX = 13


def label_rows(records: list[dict], field: str) -> list[list[dict]]:
    """Records of rule labels placed on a log-2 axis, in rows that never overprint: sorted by `field`, each goes to
    the lowest row whose last label is at least LABEL_ROW_OCTAVES to its left."""
    rows: list[list[dict]] = []
    for record in sorted(records, key=lambda record: record[field]):
        row = next((row for row in rows if math.log2(record[field] / row[-1][field]) >= LABEL_ROW_OCTAVES), None)
        if row is None:
            rows.append(row := [])
        row.append(record)
    return rows


def bottom_labels(chart: Chart, records: list[dict], field: str, color: str) -> None:
    """Rule labels at the bottom of the plot, one row above the other where they would overprint (label_rows)."""
    for index, row in enumerate(label_rows(records, field)):
        chart.layer(row, {"type": "text", "align": "left", "dx": 3, "baseline": "bottom", "y": {"expr": "height"},
                          "dy": -2 - LABEL_ROW_PX * index, "color": color}, x=q(field), text=n("label"))
