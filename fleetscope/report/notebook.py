"""Comparing hosts, CPUs and runs in the marimo notebooks of analysis/: what `fleetscope compare` reads
(fleetscope.report.fleet_pages.compare) as polars DataFrames with every number formatted for people, and its charts
(the comparison page's own Vega-Lite specs, with their legends) as Altair charts. A notebook only wires
widgets to these functions, and the tests call them directly.

Every family is here: latency, TLB and MLP; bandwidth, thread scaling and loaded latency; asynchronous
reads; storage; Intel MLC (as curves); core-to-core latency and SMT interference (as tables: they have no
curve to overlay). Drift between two runs of a host is reported as asv reports a regression: only when a
level's latency moved by at least the threshold and a Mann-Whitney U test on the raw samples of its
plateau says it is not noise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import altair as alt
import duckdb
import polars as pl

from fleetscope.report import fleet, fleet_pages
from fleetscope.report.fleet_pages import Comparison
from fleetscope.units import format_count, format_time_ns, format_with_unit, readable_text

# How the notebook can group hosts, and the operand each group becomes (fleet.resolve's forms).
GROUPINGS = {"host": "host", "microarchitecture": "uarch", "inventory group": "group"}


def connect(db: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """The warehouse, read-only: `db`, else $FLEETSCOPE_DB, else warehouse/fleet.duckdb."""
    from fleetscope.store.warehouse import DEFAULT_DB, open_read_only

    return open_read_only(Path(db or os.environ.get("FLEETSCOPE_DB") or DEFAULT_DB))


def _frame(rows: list[dict], columns: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={column: pl.String for column in columns}, orient="row")


def hosts(connection: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """One row per host: its latest run, microarchitecture, CPU model and inventory groups."""
    latest = [run for run in fleet.runs(connection) if run.recency == 1]
    return _frame([{"host": run.host, "run_id": run.run_id, "microarchitecture": run.microarchitecture,
                    "cpu_model": run.cpu_model_name, "inventory_groups": ", ".join(run.inventory_groups)
                    if run.inventory_groups is not None else None} for run in latest],
                  ("host", "run_id", "microarchitecture", "cpu_model", "inventory_groups"))


def operands(host_table: pl.DataFrame, by: str) -> dict[str, str]:
    """Every group of hosts under the grouping `by` (a key of GROUPINGS), as {label: operand}."""
    kind = GROUPINGS[by]
    if kind == "host":
        return {host: host for host in host_table["host"].to_list()}
    if kind == "uarch":
        return {name: f"uarch:{name}" for name in sorted(set(host_table["microarchitecture"].to_list()))}
    groups = {group.strip() for text in host_table["inventory_groups"].to_list() if text for group in text.split(",")}
    return {group: f"group:{group}" for group in sorted(groups)}


def comparison(connection: duckdb.DuckDBPyConnection, texts: Sequence[str],
               threshold: float = fleet.SIGNIFICANT_CHANGE) -> Comparison:
    """What `fleetscope compare TEXTS...` shows (the first operand is the baseline)."""
    return fleet_pages.compare(connection, list(texts), threshold=threshold)


def figures(result: Comparison) -> pl.DataFrame:
    """Every figure per operand and each operand's difference from the baseline with its test, as text."""
    context = fleet_pages.compare_context(result.operands, result.rows, result.curves, result.flags)
    names = [operand.text for operand in result.operands]
    columns = ["figure", *names, *[f"{name} vs {names[0]}" for name in names[1:]],
               *[f"test {name}" for name in names[1:]]]
    rows = [{"figure": row["label"], **dict(zip(names, row["shown"])),
             **{f"{name} vs {names[0]}": delta["text"] for name, delta in zip(names[1:], row["deltas"])},
             **{f"test {name}": (delta["test"] or "") + (": significant" if delta["significant"] else "")
                for name, delta in zip(names[1:], row["deltas"])}} for row in context["table"]]
    return _frame(rows, columns)


def charts(result: Comparison) -> list[tuple[str, list[alt.Chart]]]:
    """Each family's overlaid curves, one line per operand, legend included (the comparison page's charts)."""
    families: dict[str, list[alt.Chart]] = {}
    for item in result.curves:
        spec = {**item["spec"], "width": 480}
        families.setdefault(item["curve"].family, []).append(alt.Chart.from_dict(spec))
    return list(families.items())


def _runs(result: Comparison) -> list[fleet.Run]:
    return list(dict.fromkeys(run for operand in result.operands for run in operand.runs))


def c2c(connection: duckdb.DuckDBPyConnection, result: Comparison) -> pl.DataFrame:
    """Core-to-core latency of every host compared: the median one-way latency of its CPU pairs by how close
    the two CPUs are (SMT siblings, same package, across packages)."""
    rows = []
    keys = [run.key for run in _runs(result)]
    batch = fleet.batch(connection, keys)
    for run in _runs(result):
        pairs = batch.rows("c2c_matrix", run.key)
        for placement, chosen in (("SMT siblings", [pair for pair in pairs if pair["smt_siblings"]]),
                                  ("same package", [pair for pair in pairs if not pair["smt_siblings"]
                                                    and pair["same_package"] is not False]),
                                  ("across packages", [pair for pair in pairs if pair["same_package"] is False])):
            latencies = sorted(pair["median_ns"] for pair in chosen if pair["median_ns"] is not None)
            if latencies:
                rows.append({"host": run.host, "pairs": placement, "CPU pairs": format_count(len(latencies)),
                             "median one-way": format_time_ns(latencies[len(latencies) // 2]),
                             "fastest": format_time_ns(latencies[0]), "slowest": format_time_ns(latencies[-1])})
    return _frame(rows, ("host", "pairs", "CPU pairs", "median one-way", "fastest", "slowest"))


def smt(connection: duckdb.DuckDBPyConnection, result: Comparison) -> pl.DataFrame:
    """SMT interference of every host compared: each workload's speedup on two SMT siblings and on two
    cores over one CPU alone (empty where no host has SMT siblings: the experiment is skipped there)."""
    keys = [run.key for run in _runs(result)]
    batch = fleet.batch(connection, keys)
    rows = [{"host": run.host, "workload": row["workload"], "placement": row["placement"],
             "speedup over alone": f"{row['speedup']:.2f}x" if row["speedup"] is not None else None}
            for run in _runs(result) for row in batch.rows("smt_interference", run.key)]
    return _frame(rows, ("host", "workload", "placement", "speedup over alone"))


def host_runs(connection: duckdb.DuckDBPyConnection, host: str) -> list[str]:
    """Every run of one host, oldest first."""
    return [run.run_id for run in sorted((run for run in fleet.runs(connection) if run.host == host),
                                         key=lambda run: -run.recency)]


def drift(result: Comparison) -> pl.DataFrame:
    """The levels of two runs of one host side by side: latency before and after, the change, the test."""
    context = fleet_pages.compare_context(result.operands, result.rows, result.curves, result.flags)
    rows = [{"level": row["level"], "baseline": row["shown"][0], "compared": row["shown"][1],
             "change": row["deltas"][0]["text"], "test": row["deltas"][0]["test"],
             "moved": "yes" if row["deltas"][0]["significant"] else "no"}
            for row in context["table"] if row["level"]]
    return _frame(rows, ("level", "baseline", "compared", "change", "test", "moved"))


def moved(result: Comparison) -> list[str]:
    """One sentence per level whose latency moved by both the threshold and the test."""
    return fleet.moved(result.rows)


def flags(connection: duckdb.DuckDBPyConnection, result: Comparison) -> pl.DataFrame:
    """The plausibility checks of every host compared, flagged first; `not_run` says why a check could not run."""
    keys = [run.key for run in _runs(result)]
    batch = fleet.batch(connection, keys)
    rows = [{"host": run.host, "check": flag["rule"], "result": flag["status"], "where": flag["subject"],
             "worst": readable_text(flag["item"] or ""), "value": format_with_unit(flag["value"], flag["unit"]),
             "evidence or reason": readable_text(flag["evidence"] or flag["reason"] or "")}
            for run in _runs(result) for flag in batch.rows("derived_flags", run.key)]
    rows.sort(key=lambda row: (row["result"] != "flagged", row["host"]))
    return _frame(rows, ("host", "check", "result", "where", "worst", "value", "evidence or reason"))
