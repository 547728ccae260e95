"""Comparing hosts, CPUs and runs from the warehouse: the logic behind the marimo notebooks in analysis/.

Data come back as polars DataFrames and charts as Altair specs, so a notebook only wires widgets to
these functions (and the tests call them directly). Drift between two runs of a host is reported the
way asv reports a regression: only when the change is both larger than a threshold and significant by a
Mann-Whitney U test on the raw samples.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import altair as alt
import duckdb
import polars as pl

from fleetscope.resources import sql
from fleetscope.units import format_bytes

DRIFT_THRESHOLD = 0.05   # a level's latency must move by at least 5% ...
DRIFT_ALPHA = 0.05       # ... and the Mann-Whitney p-value be below this, to count as moved
EXACT_LIMIT = 20         # exact U distribution up to this many samples per side (no ties), else normal
BANDWIDTH_NOTE = ("single-thread read bandwidth on each level's plateau (inferred_level_bandwidth); empty where the "
                  "run has no bandwidth sweep")


def connect(db: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """The warehouse, read-only: `db`, else $FLEETSCOPE_DB, else warehouse/fleet.duckdb."""
    from fleetscope.warehouse import DEFAULT_DB, open_read_only

    return open_read_only(Path(db or os.environ.get("FLEETSCOPE_DB") or DEFAULT_DB))


def frame(connection: duckdb.DuckDBPyConnection, query: str, parameters: Sequence | None = None) -> pl.DataFrame:
    """The rows of warehouse/queries/compare/<query>.sql as a DataFrame."""
    cursor = connection.execute(sql(f"compare/{query}"), list(parameters or []))
    columns = [description[0] for description in cursor.description]
    return pl.DataFrame(cursor.fetchall(), schema=columns, orient="row", infer_schema_length=None)


def _chosen(runs: Sequence[tuple[str, str]]) -> list[list[str]]:
    """The (host, run_id) pairs as the two list parameters the compare queries start with."""
    return [[host for host, _ in runs], [run_id for _, run_id in runs]]


# ---- hosts and hierarchies side by side ----------------------------------------------------------

def hosts(connection: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per host: its latest run, CPU model and microarchitecture (vendor family/model), VM or not."""
    return frame(connection, "hosts")


def groups(host_table: pl.DataFrame, by: str) -> dict[str, list[str]]:
    """Hosts grouped by 'host' (each alone), 'cpu_model_name' or 'microarchitecture'."""
    grouped: dict[str, list[str]] = {}
    for row in host_table.iter_rows(named=True):
        grouped.setdefault(str(row[by] if by != "host" else row["host"]), []).append(row["host"])
    return grouped


def latest_runs_of(host_table: pl.DataFrame, chosen: Sequence[str]) -> list[tuple[str, str]]:
    return [(row["host"], row["run_id"]) for row in host_table.iter_rows(named=True) if row["host"] in chosen]


def latency_curves(connection: duckdb.DuckDBPyConnection, runs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    return frame(connection, "latency_curves", _chosen(runs))


def level_table(connection: duckdb.DuckDBPyConnection, runs: Sequence[tuple[str, str]],
                page_policy: str = "thp") -> pl.DataFrame:
    """Per host and inferred level: latency, cycles, effective and sysfs size, and the single-thread read
    bandwidth on the level's plateau (NULL where the run has no bandwidth sweep: the note says so)."""
    table = frame(connection, "level_table", [*_chosen(runs), page_policy])
    return table.with_columns(pl.lit(BANDWIDTH_NOTE).alias("bandwidth_note"))


def tlb_table(connection: duckdb.DuckDBPyConnection, runs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    return frame(connection, "tlb_table", _chosen(runs))


def tlb_curves(connection: duckdb.DuckDBPyConnection, runs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    return frame(connection, "tlb_curves", _chosen(runs))


def loaded_latency_curves(connection: duckdb.DuckDBPyConnection, runs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    return frame(connection, "loaded_latency_curves", _chosen(runs))


def flag_table(connection: duckdb.DuckDBPyConnection, runs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    return frame(connection, "flag_table", _chosen(runs))


def _log2_bytes_axis(title: str) -> alt.X:
    return alt.X("working_set_bytes:Q", title=title, scale=alt.Scale(type="log", base=2),
                 axis=alt.Axis(labelExpr="datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB'"
                                         " : format(datum.value / 1024, '~g') + ' KiB'"))


def latency_overlay_chart(curves: pl.DataFrame, levels: pl.DataFrame | None = None) -> alt.Chart:
    """Latency curves of several hosts on one log-log chart (minimum per size), with each host's inferred
    effective sizes as ticks."""
    data = curves.with_columns((pl.col("host") + " · " + pl.col("page_policy").fill_null("?")).alias("curve"))
    lines = alt.Chart(data).mark_line(point=True).encode(
        x=_log2_bytes_axis("working set"),
        y=alt.Y("min_ns:Q", title="latency (ns, fastest sample, log)", scale=alt.Scale(type="log")),
        color=alt.Color("curve:N", title="host · pages"),
        tooltip=["host:N", "page_policy:N", "working_set_bytes:Q", alt.Tooltip("min_ns:Q", format=".3f"),
                 alt.Tooltip("median_ns:Q", format=".3f")])
    layers = [lines]
    if levels is not None and levels.height:
        sizes = levels.filter(pl.col("capacity_bytes").is_not_null()).rename({"capacity_bytes": "working_set_bytes"})
        layers.append(alt.Chart(sizes).mark_rule(strokeDash=[3, 3]).encode(
            x="working_set_bytes:Q", color=alt.Color("host:N", legend=None),
            tooltip=["host:N", "level:N", "working_set_bytes:Q"]))
    return alt.layer(*layers).properties(width="container", height=380,
                                         title="Latency vs working set (dashed: inferred effective sizes)")


def tlb_chart(curves: pl.DataFrame) -> alt.Chart:
    return alt.Chart(curves).mark_line(point=True).encode(
        x=alt.X("pages:Q", scale=alt.Scale(type="log", base=2), title="pages touched (one line each)"),
        y=alt.Y("paired_difference_median_ns:Q", title="translation ns (paired difference)"),
        color="host:N", strokeDash="page_size:N",
        tooltip=["host:N", "page_size:N", "pages:Q", alt.Tooltip("paired_difference_median_ns:Q", format=".2f")],
    ).properties(width="container", height=300, title="TLB reach")


def loaded_latency_chart(curves: pl.DataFrame) -> alt.Chart:
    return alt.Chart(curves).mark_line(point=True).encode(
        x=alt.X("bandwidth_gb_s:Q", title="bandwidth (GB/s)"),
        y=alt.Y("latency_ns:Q", title="loaded latency (ns)", scale=alt.Scale(zero=False)),
        color="host:N", detail="curve:N", strokeDash="source:N", order=alt.Order("delay:Q", sort="descending"),
        tooltip=["host:N", "source:N", "traffic:N", "delay:Q", alt.Tooltip("bandwidth_gb_s:Q", format=".2f"),
                 alt.Tooltip("latency_ns:Q", format=".1f")],
    ).properties(width="container", height=300, title="Loaded latency (MLC and the loaded_latency kernel)")


# ---- one host across runs ------------------------------------------------------------------------

def host_runs(connection: duckdb.DuckDBPyConnection, host: str) -> pl.DataFrame:
    return frame(connection, "host_runs", [host])


def _exact_u_cdf(first: int, second: int) -> list[float]:
    """P(U <= u) for u = 0 .. first*second, no ties (counts of the Gaussian binomial coefficient)."""
    counts = [[[1] if i == 0 or j == 0 else [] for j in range(second + 1)] for i in range(first + 1)]
    for i in range(1, first + 1):
        for j in range(1, second + 1):
            # the largest value is from the first sample (adds j to U) or from the second (adds 0)
            with_first, with_second = counts[i - 1][j], counts[i][j - 1]
            size = max(len(with_first) + j, len(with_second))
            merged = [0] * size
            for u, count in enumerate(with_first):
                merged[u + j] += count
            for u, count in enumerate(with_second):
                merged[u] += count
            counts[i][j] = merged
    total = sum(counts[first][second])
    cdf, running = [], 0
    for count in counts[first][second]:
        running += count
        cdf.append(running / total)
    return cdf


def mann_whitney_u(first: Sequence[float], second: Sequence[float]) -> tuple[float, float]:
    """Two-sided Mann-Whitney U test: (U of `first`, p-value). Exact for small samples without ties,
    else the normal approximation with tie and continuity corrections."""
    n1, n2 = len(first), len(second)
    if not n1 or not n2:
        raise ValueError("Mann-Whitney needs samples on both sides")
    ordered = sorted([(value, 0) for value in first] + [(value, 1) for value in second])
    ranks, tie_term, index = [0.0] * len(ordered), 0.0, 0
    while index < len(ordered):
        end = index
        while end + 1 < len(ordered) and ordered[end + 1][0] == ordered[index][0]:
            end += 1
        for position in range(index, end + 1):
            ranks[position] = (index + end) / 2 + 1
        tied = end - index + 1
        tie_term += tied**3 - tied
        index = end + 1
    u1 = sum(rank for rank, (_, side) in zip(ranks, ordered) if side == 0) - n1 * (n1 + 1) / 2
    if tie_term == 0 and n1 <= EXACT_LIMIT and n2 <= EXACT_LIMIT:
        cdf = _exact_u_cdf(n1, n2)
        low = cdf[int(u1)]
        high = 1 - (cdf[int(u1) - 1] if u1 >= 1 else 0.0)
        return u1, min(1.0, 2 * min(low, high))
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0:
        return u1, 1.0
    z = max(abs(u1 - n1 * n2 / 2) - 0.5, 0) / math.sqrt(variance)
    return u1, math.erfc(z / math.sqrt(2))


def _plateau_samples(connection: duckdb.DuckDBPyConnection, host: str, run_id: str, page_policy: str,
                     sizes: Sequence[int]) -> list[float]:
    if not sizes:
        return []
    rows = connection.execute(sql("compare/plateau_samples"), [host, run_id, page_policy, list(sizes)]).fetchall()
    return [value for (value,) in rows]


def level_drift(connection: duckdb.DuckDBPyConnection, host: str, baseline_run: str, run: str,
                page_policy: str = "thp", threshold: float = DRIFT_THRESHOLD, alpha: float = DRIFT_ALPHA) -> pl.DataFrame:
    """Each inferred level of `baseline_run` against the same level of `run`: latency change, effective size
    change (octaves), and whether the latency moved: |change| >= threshold AND Mann-Whitney p < alpha, on the
    raw samples of the sizes on the baseline's plateau that both runs measured."""
    levels = frame(connection, "drift_levels", [host, baseline_run, run, page_policy])
    sizes = frame(connection, "drift_sizes", [host, baseline_run, run, page_policy])
    common = (set(sizes.filter(pl.col("run_id") == baseline_run)["working_set_bytes"].to_list())
              & set(sizes.filter(pl.col("run_id") == run)["working_set_bytes"].to_list()))
    after = {row["level"]: row for row in levels.filter(pl.col("run_id") == run).iter_rows(named=True)}
    rows = []
    for before in levels.filter(pl.col("run_id") == baseline_run).sort("level_index").iter_rows(named=True):
        now = after.get(before["level"])
        row = {"level": before["level"], "baseline_ns": before["latency_ns"], "run_ns": None, "change": None,
               "baseline_size": before["capacity_bytes"], "run_size": None, "size_octaves": None,
               "p_value": None, "samples": None, "moved": False, "note": None}
        if now is None:
            rows.append({**row, "note": f"{run} has no level {before['level']}"})
            continue
        row.update(run_ns=now["latency_ns"], change=now["latency_ns"] / before["latency_ns"] - 1,
                   run_size=now["capacity_bytes"])
        if before["capacity_bytes"] and now["capacity_bytes"]:
            row["size_octaves"] = math.log2(now["capacity_bytes"] / before["capacity_bytes"])
        plateau = sorted(size for size in common
                         if before["plateau_first_bytes"] <= size <= before["plateau_last_bytes"])
        first = _plateau_samples(connection, host, baseline_run, page_policy, plateau)
        second = _plateau_samples(connection, host, run, page_policy, plateau)
        if first and second:
            _, p_value = mann_whitney_u(first, second)
            row.update(p_value=p_value, samples=f"{len(first)} vs {len(second)}",
                       moved=abs(row["change"]) >= threshold and p_value < alpha)
        else:
            row["note"] = "no sizes of this plateau measured in both runs: no test"
        rows.append(row)
    schema = {"level": pl.String, "baseline_ns": pl.Float64, "run_ns": pl.Float64, "change": pl.Float64,
              "baseline_size": pl.Int64, "run_size": pl.Int64, "size_octaves": pl.Float64, "p_value": pl.Float64,
              "samples": pl.String, "moved": pl.Boolean, "note": pl.String}
    return pl.DataFrame(rows, schema=schema, orient="row")


def describe_drift(drift: pl.DataFrame) -> list[str]:
    """One sentence per level that moved (both thresholds), for the notebook's summary."""
    sentences = []
    for row in drift.filter(pl.col("moved")).iter_rows(named=True):
        size = ""
        if row["size_octaves"]:
            size = (f"; effective size {format_bytes(row['baseline_size'])} -> {format_bytes(row['run_size'])} "
                    f"({row['size_octaves']:+.2f} octaves)")
        sentences.append(f"{row['level']}: {row['baseline_ns']:.3g} -> {row['run_ns']:.3g} ns "
                         f"({row['change']:+.1%}, Mann-Whitney p = {row['p_value']:.2g}){size}")
    return sentences
