"""The fleet side by side: which runs a question is about (a host, an inventory group, a microarchitecture,
one run), the numbers each run's summary shows, the hosts that sit far from their peers (`fleetscope
outliers`), and sets of runs compared level by level with a significance test (`fleetscope compare`).

Every number here is one the host page's summary shows, computed by the same code (fleetscope.report.summary and
the experiment modules' headline figures) from the same report queries; nothing is measured twice. The
fleet page, `compare`, `outliers` and the notebooks all read them from here.

A difference is reported as significant only when it is both large (at least SIGNIFICANT_CHANGE) and
unlikely to be noise: a two-sided Mann-Whitney U test on the raw latency samples of the level's plateau
(p < SIGNIFICANT_P), as asv reports a regression. Outliers are scored with the median and the median
absolute deviation of a host's peers (same microarchitecture, or same CPU model), which one bad host cannot
drag along.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import duckdb

from fleetscope import catalog
from fleetscope.report import summary
from fleetscope.store.batch import Batch
from fleetscope.errors import UserError
from fleetscope.report.sections import HEADLINES, Column, Headline
from fleetscope.report.derived_tables import derived_rows
from fleetscope.resources import sql
from fleetscope.units import (KINDS, choose_unit, format_bytes, format_count, format_count_bracket, format_number,
                              format_percent, format_size, to_base)

SIGNIFICANT_CHANGE = 0.05   # a level's latency must move by at least 5% ...
SIGNIFICANT_P = 0.05        # ... and the Mann-Whitney p-value be below this, to count as a real difference
EXACT_LIMIT = 20            # exact U distribution up to this many samples per side (no ties), else normal
# Outliers: a host's value must differ from its group's median by at least this share AND by this many
# robust standard deviations (1.4826 x MAD; Iglewicz and Hoaglin's modified z-score cut-off).
OUTLIER_RELATIVE = 0.10
OUTLIER_Z = 3.5
MIN_PEERS = 4               # peers (hosts of the same group besides the host) needed before anyone is scored
_MAD_TO_SIGMA = 1.4826

# Numbers the fleet adds to a run's summary, from its plausibility checks.
FLAGGED = Column("flagged", "flags", "count")
THP_GRANTED = Column("thp_granted", "THP granted", "percent")
# The unit of each column kind as --format json names it.
_UNITS = {"ns": "ns", "s": "s", "gb_s": "GB/s", "bytes": "bytes", "count": "count", "number": "ratio", "percent": "fraction",
          "ghz": "GHz", "gflop_s": "GFLOP/s"}


def unit_of(column: Column) -> str:
    return _UNITS[column.kind]


def format_value(column: Column, value: float | None) -> str:
    """A value with its unit, for people: '220.7 ns', '13.4 GB/s', '32 MiB', '97.5%', '—' for none."""
    if not isinstance(value, (int, float)):
        return "—"
    if column.kind in KINDS:
        unit = choose_unit(KINDS[column.kind][0], [to_base(value, column.kind)])
        return f"{unit.text(to_base(value, column.kind))} {unit.symbol}"
    return {"bytes": format_bytes, "count": format_count, "percent": format_percent}.get(column.kind, format_number)(value)


def is_size(column: Column) -> bool:
    """A column measured as a bracket: a level's size ('l2_size') or a TLB's entries ('tlb_l1_entries'); its
    values come with their bracket and method (summary.size_parts)."""
    return re.fullmatch(r"l\d+_size|tlb_l\d_entries", column.key) is not None


def _bracket_format(column: Column, low, high, estimate, method) -> str:
    if column.kind == "bytes":
        return format_size(low, high, estimate, method)
    return format_count_bracket(low, high, estimate, method)


def size_text(values: dict, column: Column) -> str:
    """A bracketed value for people, from one run's values: '32–35 KiB · sysfs 32 KiB', '32–64 KiB', '68–74 ·
    onset 71' ('—': none)."""
    return _bracket_format(column, *summary.size_parts(values, column.key)) or "—"


def size_order(values: dict, column: Column) -> float | None:
    """The number a size column sorts by: its estimate, else the log-middle of its bracket."""
    low, high, estimate, _method = summary.size_parts(values, column.key)
    if isinstance(estimate, (int, float)):
        return estimate
    return math.sqrt(low * high) if isinstance(low, (int, float)) and isinstance(high, (int, float)) else None


# ---- which runs ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One run of one host with the host's identity as that run recorded it."""
    host: str
    run_id: str
    started_at: object
    status: str | None
    recency: int                  # 1 for the host's latest run, 2 for the one before ...
    microarchitecture: str
    uarch_known: bool
    cpu_model_name: str | None
    inventory_groups: tuple[str, ...] | None
    is_reference: bool = False    # a reference host's published curve (origin 'reference'), not a lab machine
    reference_source: str | None = None
    reference_tool: str | None = None      # what measured it, as its source names it
    reference_method: str | None = None    # how: reference_method()'s words
    reference_clock_ghz: float | None = None
    reference_notes: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.run_id, self.host


def rows_of(connection: duckdb.DuckDBPyConnection, query: str, parameters: Sequence = ()) -> list[dict]:
    """The rows of warehouse/queries/<query>.sql as dicts."""
    cursor = connection.execute(sql(query), list(parameters))
    columns = [description[0] for description in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


_PATTERNS = {"random-lines": "a dependent chase over random lines",
             "line-per-page": "a dependent chase with one line per page (TLB steps inside the curve)",
             "sequential": "a sequential walk (prefetchers hide latency)"}


def reference_method(pattern: str | None, page_bytes: int | None, relative: bool | None) -> str | None:
    """How a reference curve was measured, in words: 'a dependent chase with one line per page (TLB steps inside
    the curve), 4 KiB pages, ns per load'; None for a run that is no reference."""
    if pattern is None:
        return None
    page = f"{format_bytes(page_bytes)} pages" if page_bytes else "page size not stated"
    unit = "ns over L1 (a relative curve)" if relative else "ns per load"
    return f"{_PATTERNS.get(pattern, pattern)}, {page}, {unit}"


def runs(connection: duckdb.DuckDBPyConnection) -> list[Run]:
    """Every run in the warehouse with its host's identity, newest first per host."""
    return [Run(row["host"], row["run_id"], row["started_at"], row["status"], row["recency"],
                row["microarchitecture"], bool(row["uarch_known"]), row["cpu_model_name"],
                tuple(row["inventory_groups"]) if row["inventory_groups"] is not None else None,
                bool(row["is_reference"]), row["reference_source"], row["reference_tool"],
                reference_method(row["reference_pattern"], row["reference_page_bytes"], row["reference_relative"]),
                row["reference_clock_ghz"], row["reference_notes"])
            for row in rows_of(connection, "compare/runs")]


def _squashed(text: str) -> str:
    return re.sub(r"[^0-9a-z+]", "", text.lower())


@dataclass(frozen=True)
class Operand:
    """One side of a comparison: what the user typed and the runs it stands for."""
    text: str
    kind: str                     # host | run | group | uarch
    runs: tuple[Run, ...]


OPERAND_FORMS = ("HOST", "HOST@RUN_ID", "group:NAME", "uarch:NAME")


def resolve(text: str, all_runs: list[Run]) -> Operand:
    """An operand: a host (its latest run), HOST@RUN_ID, group:NAME (the latest run of every host in that
    inventory group) or uarch:NAME (of every host of that microarchitecture; 'zen4' matches 'Zen 4 (Genoa)'
    and 'Zen 4 (Raphael)', case, spaces and punctuation aside). Raises UserError naming what exists."""
    latest = [run for run in all_runs if run.recency == 1]
    kind, _unused, name = text.partition(":") if text.startswith(("group:", "uarch:")) else ("", "", text)
    if kind == "group":
        chosen = [run for run in latest if run.inventory_groups and name in run.inventory_groups]
        known = sorted({group for run in latest for group in run.inventory_groups or ()})
        what = f"no host's latest run is in inventory group {name!r}; groups: {', '.join(known) or 'none recorded'}"
    elif kind == "uarch":
        wanted = _squashed(name)
        chosen = [run for run in latest if wanted and wanted in (_squashed(run.microarchitecture),
                                                                 _squashed(run.microarchitecture.split(" (")[0]))]
        known = sorted({run.microarchitecture for run in latest})
        what = f"no host's latest run is of microarchitecture {name!r}; the fleet has: {'; '.join(known)}"
    elif "@" in text:
        host, _unused, run_id = text.rpartition("@")
        kind, chosen = "run", [run for run in all_runs if run.host == host and run.run_id == run_id]
        others = [run.run_id for run in all_runs if run.host == host]
        what = (f"host {host!r} has no run {run_id!r}; its runs: {', '.join(others)}" if others
                else f"no host {host!r} in the warehouse{did_you_mean(host, [run.host for run in latest])}")
    else:
        kind, chosen = "host", [run for run in latest if run.host == text]
        what = (f"no host {text!r} in the warehouse{did_you_mean(text, [run.host for run in latest])} (an inventory "
                "group is group:NAME, a microarchitecture uarch:NAME)")
    if not chosen:
        raise UserError(what)
    return Operand(text, kind, tuple(sorted(chosen, key=lambda run: run.host)))


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """' (did you mean zen3-01?)' when `name` is a slip away from known names (difflib's ratio >= 0.6), else ''."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


# ---- the numbers of each run ---------------------------------------------------------------------------

def flag_values(flags: list[dict]) -> dict[str, float | None]:
    """How many checks flagged the run, and the smallest share of the huge pages the latency sweep asked
    for that the kernel granted (None where the check did not run)."""
    grants = [flag["value"] for flag in flags if flag["rule"] == "huge_pages_not_granted"
              and flag["subject"] == "latency_curve" and flag["status"] != "not_run" and flag["value"] is not None]
    return {FLAGGED.key: sum(flag["status"] == "flagged" for flag in flags), THP_GRANTED.key: min(grants, default=None)}


def values_of(fetch: Callable[[str], list[dict]], derived: dict[str, list[dict]],
              headlines: tuple[Headline, ...] = HEADLINES) -> dict[str, float | None]:
    """One run's numbers: the summary's (levels and headline figures) and the flags'."""
    return {**summary.run_values(derived, summary.figures(fetch, derived, headlines)), **flag_values(derived["flags"])}


def batch(connection: duckdb.DuckDBPyConnection, keys: Iterable[tuple[str, str]]) -> Batch:
    """The report's own queries for these (run_id, host), each run once for all of them."""
    return Batch(connection, list(dict.fromkeys(keys)))


def run_values(rows: Callable[[str, tuple[str, str]], list[dict]], keys: Iterable[tuple[str, str]],
               headlines: tuple[Headline, ...] = HEADLINES) -> dict[tuple[str, str], dict[str, float | None]]:
    """The numbers of each (run_id, host); `rows(query, key)` gives a run's rows of a report query."""
    found = {}
    for key in dict.fromkeys(keys):
        def fetch(query: str, key: tuple[str, str] = key) -> list[dict]:
            return rows(query, key)
        found[key] = values_of(fetch, derived_rows(fetch), headlines)
    return found


def kind_levels(rows: Callable[[str, tuple[str, str]], list[dict]], keys: Iterable[tuple[str, str]]
                ) -> dict[tuple[str, str], list[dict]]:
    """Each core kind's hierarchy of every (run_id, host) whose host has more than one kind (summary.kind_levels;
    the fleet columns are the first, fastest kind's); runs of one-kind hosts have none."""
    found = {}
    for key in dict.fromkeys(keys):
        def fetch(query: str, key: tuple[str, str] = key) -> list[dict]:
            return rows(query, key)
        if kinds := summary.kind_levels({"inferred_levels": fetch("derived_inferred_levels")}):
            found[key] = kinds
    return found


def measured_columns(values: Iterable[dict[str, float | None]],
                     headlines: tuple[Headline, ...] = HEADLINES) -> list[Column]:
    """The fleet's measured columns, in reading order: each inferred level's effective size and latency
    (L1, L2 ... DRAM, the levels any run has), then each headline figure's numbers, then THP granted."""
    present = {key for row in values for key, value in row.items() if value is not None}
    present |= {key.removesuffix("_low") for key in present if re.fullmatch(r"l\d+_size_low", key)}
    names = {key.rsplit("_", 1)[0] for key in present if re.fullmatch(r"(l\d+|dram)_(size|latency)", key)}
    columns = []
    for name in sorted(names, key=lambda level: (level == "dram", int(level[1:]) if level != "dram" else 0)):
        size, latency = summary.level_column_keys(name.upper() if name != "dram" else "DRAM")
        label = name.upper() if name != "dram" else "DRAM"
        if size in present:
            columns.append(Column(size, f"{label} size", "bytes"))
        columns.append(Column(latency, f"{label} latency", "ns"))
    columns += [column for headline in headlines for column in headline.columns]
    return columns + [THP_GRANTED]


def change(before: dict[str, float | None], after: dict[str, float | None],
           columns: list[Column]) -> dict | None:
    """The largest relative change of a measured column between two runs of a host: {column, relative};
    None when no column has a value in both (no significance test: `compare HOST@A HOST@B` does that)."""
    moves = [(abs(after[column.key] / before[column.key] - 1), after[column.key] / before[column.key] - 1, column)
             for column in columns if isinstance(before.get(column.key), (int, float))
             and isinstance(after.get(column.key), (int, float)) and before[column.key] != 0]
    if not moves:
        return None
    _unused, relative, column = max(moves, key=lambda move: move[0])
    return {"column": column.key, "header": column.header, "relative": relative}


# ---- outliers ------------------------------------------------------------------------------------------

# The usual causes of a host's number sitting far from its peers', by column, for the direction that
# hurts (higher latency, lower bandwidth or grant ...): the first words a performance engineer would check.
_MEMORY = "a missing or mismatched memory channel (check the DIMMs) or memory on a remote NUMA node"
_CACHE = "a cache partition (resctrl CAT / L3 QoS) or a busy SMT sibling sharing the core"
CAUSES: tuple[tuple[str, bool, str], ...] = (
    # (column key pattern, higher is worse, cause)
    (r"dram_latency", True, _MEMORY),
    (r"read_.*_gb_s", False, _MEMORY),
    (r"l\d+_(size|latency)", True, _CACHE),
    (r"thp_granted", False, "the THP setting (transparent_hugepage, defrag) or memory too fragmented for huge pages"),
    (r"tlb_l\d_entries", False, "a different page size, or a hypervisor's nested paging"),
    (r"mlp", False, "fewer misses in flight: an SMT sibling, prefetcher or power settings"),
    (r"reference_workload_s", True, "the reference workload ran slower: a different libc allocator, memory or power "
                                    "settings, or a busy host (its Workloads section says where the time went)"),
    # a clock below its same-CPU peers' with every core busy: the package is held back
    (r"clock_.*_ghz", False, "power limit, cooling or BIOS setting (turbo off, a lower power limit, a clogged "
                             "heat sink or fan)"),
    (r"fp64_.*_gflop_s", False, "a lower clock (see the core clock) or a BIOS setting that disables a vector "
                                "unit or AVX-512"),
    (r"fp64_flop_per_cycle", False, "narrower vector instructions than its peers run (a BIOS or microcode "
                                    "setting, or a hypervisor hiding AVX-512)"),
)
# Levels are scored by their latency and size; what is not a property of the CPU (storage) has no peers here.
PEER_HEADLINES = tuple(headline for headline in HEADLINES if catalog.experiment(headline.experiment).peer_scored)
_NOT_SCORED = {column.key for headline in HEADLINES if headline not in PEER_HEADLINES for column in headline.columns}


def peer_columns(columns: list[Column]) -> list[Column]:
    """The measured columns outliers scores (all but storage's)."""
    return [column for column in columns if column.key not in _NOT_SCORED]


def cause_of(column: str, relative: float, others: set[str]) -> str:
    """The usual cause of a host's value in `column` moving by `relative`, given the other columns that
    moved on the same host (DRAM latency up with bandwidth down is one story)."""
    for pattern, higher_is_worse, cause in CAUSES:
        if not re.fullmatch(pattern, column):
            continue
        if pattern.startswith(r"l\d") and re.fullmatch(r"l\d+_size", column):
            return f"the level's step moved: {cause}"
        if (relative > 0) != higher_is_worse:
            return "better than its peers: the peers may share a problem (compare them with this host)"
        memory = {key for key in others if re.fullmatch(r"dram_latency|read_.*_gb_s", key)} - {column}
        if cause == _MEMORY and memory:
            return f"DRAM latency up and bandwidth down together: {cause}"
        return cause
    return "compare this host's page with a peer's"


@dataclass
class Outliers:
    by: str                                            # microarchitecture | cpu_model
    min_peers: int
    groups: list[dict] = field(default_factory=list)   # {group, hosts, scored, note}
    found: list[dict] = field(default_factory=list)    # one per host and column far from its peers
    references: list[str] = field(default_factory=list)  # reference hosts: neither scored nor anyone's peer


def _peer_group(run: Run, by: str) -> str:
    if by == "cpu_model":
        return run.cpu_model_name or run.microarchitecture
    return run.microarchitecture if run.uarch_known or not run.cpu_model_name else f"CPU model {run.cpu_model_name}"


def outliers(latest: list[Run], values: dict[tuple[str, str], dict[str, float | None]], columns: list[Column],
             by: str = "microarchitecture", min_peers: int = MIN_PEERS) -> Outliers:
    """The hosts whose numbers sit far from their peers': within each group (`by` microarchitecture, or CPU
    model), a value whose difference from the group's median is at least OUTLIER_RELATIVE of it and at least
    OUTLIER_Z robust standard deviations (1.4826 x the group's MAD: Iglewicz and Hoaglin's modified z-score,
    which one far host barely moves; a MAD of 0 counts any difference of that size). A column is scored
    where more than `min_peers` hosts of the group have it; a smaller group is listed as not scored.
    Reference hosts are set aside (listed in `references`): a published curve, measured by another tool with
    its own method, is no lab machine's peer, and a lab host is no outlier for differing from it."""
    result = Outliers(by, min_peers)
    result.references = sorted(run.host for run in latest if run.is_reference)
    grouped: dict[str, list[Run]] = defaultdict(list)
    for run in latest:
        if not run.is_reference:
            grouped[_peer_group(run, by)].append(run)
    for group, members in sorted(grouped.items()):
        entry = {"group": group, "hosts": sorted(run.host for run in members), "scored": len(members) > min_peers,
                 "note": None}
        result.groups.append(entry)
        if not entry["scored"]:
            entry["note"] = (f"{len(members)} host{'s' if len(members) != 1 else ''}: at least {min_peers + 1} are "
                             f"needed (each scored against {min_peers} peers or more); not scored")
            continue
        found_here = []
        for column in columns:
            present = [(run, values.get(run.key, {}).get(column.key)) for run in members]
            present = [(run, value) for run, value in present if isinstance(value, (int, float))]
            if len(present) <= min_peers:
                continue
            median = statistics.median(value for _unused, value in present)
            mad = statistics.median(abs(value - median) for _unused, value in present)
            if median == 0:
                continue
            for run, value in present:
                relative = value / median - 1
                z = (value - median) / (_MAD_TO_SIGMA * mad) if mad else (math.inf if value != median else 0.0)
                if abs(relative) >= OUTLIER_RELATIVE and abs(z) >= OUTLIER_Z:
                    found_here.append({"host": run.host, "run_id": run.run_id, "group": group, "column": column,
                                       "value": value, "group_median": median, "relative": relative,
                                       "robust_z": z, "peers": len(present) - 1})
        moved = defaultdict(set)
        for item in found_here:
            moved[item["host"]].add(item["column"].key)
        for item in found_here:
            item["cause"] = cause_of(item["column"].key, item["relative"], moved[item["host"]])
        result.found.extend(found_here)
    result.found.sort(key=lambda item: (item["group"], item["host"], -abs(item["relative"])))
    return result


def outliers_json(result: Outliers) -> dict:
    """`outliers --format json` (its keys are documented in README.md and pinned by a test)."""
    return {
        "by": result.by,
        "thresholds": {"relative": OUTLIER_RELATIVE, "robust_z": OUTLIER_Z, "min_peers": result.min_peers},
        "groups": [{"group": group["group"], "hosts": group["hosts"], "scored": group["scored"], "note": group["note"]}
                   for group in result.groups],
        "reference_hosts": result.references,
        "outliers": [{"host": item["host"], "run_id": item["run_id"], "group": item["group"],
                      "metric": item["column"].key, "label": item["column"].header, "unit": unit_of(item["column"]),
                      "value": item["value"], "group_median": item["group_median"], "relative": item["relative"],
                      "robust_z": item["robust_z"] if math.isfinite(item["robust_z"]) else None,
                      "peers": item["peers"], "cause": item["cause"]}
                     for item in result.found],
    }


# ---- significance --------------------------------------------------------------------------------------

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
    u1 = sum(rank for rank, (_unused, side) in zip(ranks, ordered) if side == 0) - n1 * (n1 + 1) / 2
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


def level_samples(connection: duckdb.DuckDBPyConnection,
                  keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, list[float]]]:
    """Every raw latency sample on each inferred level's plateau, per run and level, in the page policy the
    summary shows (THP where the run has it), of the fastest core kind where a host measured several (the
    kind the fleet's level columns are)."""
    keys = list(dict.fromkeys(keys))
    connection.execute(sql("report/choose_runs"), [json.dumps([{"run_id": run_id, "host": host}
                                                               for run_id, host in keys])])
    found: dict[tuple[str, str], dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(dict))
    rows = connection.execute(sql("compare/level_samples")).fetchall()
    fastest = {}
    for run_id, host, rank, *_unused in rows:
        fastest[(run_id, host)] = min(rank, fastest.get((run_id, host), rank))
    for run_id, host, rank, policy, level, values in rows:
        if rank == fastest[(run_id, host)]:
            found[(run_id, host)][policy][level] = values
    chosen = {}
    for key in keys:
        policies = found.get(key, {})
        policy = "thp" if "thp" in policies else min(policies, default=None, key=str)
        chosen[key] = dict(policies[policy]) if policy is not None else {}
    return chosen


# ---- compare -------------------------------------------------------------------------------------------

def _median(values: list[float | None]) -> float | None:
    present = [value for value in values if isinstance(value, (int, float))]
    return statistics.median(present) if present else None


def deltas(operands: list[Operand], values: dict[tuple[str, str], dict[str, float | None]],
           samples: dict[tuple[str, str], dict[str, list[float]]], columns: list[Column],
           threshold: float = SIGNIFICANT_CHANGE, alpha: float = SIGNIFICANT_P) -> list[dict]:
    """Per measured column: each operand's value (the median over its runs) and, for every operand after
    the first (the baseline), the relative difference; for a level's latency also the Mann-Whitney test
    on the pooled raw samples of that level's plateau and whether the difference is significant (at least
    `threshold` AND p < `alpha`)."""
    rows = []
    has_reference = [any(run.is_reference for run in operand.runs) for operand in operands]
    for column in columns:
        per_operand = [_median([values.get(run.key, {}).get(column.key) for run in operand.runs]) for operand in operands]
        level = column.key[:-len("_latency")].upper() if column.key.endswith("_latency") else None
        brackets = ([_bracket([values.get(run.key, {}) for run in operand.runs], column) for operand in operands]
                    if is_size(column) else None)
        row = {"column": column, "values": per_operand, "level": level, "deltas": [], "brackets": brackets}
        baseline = per_operand[0]
        pooled_base = [value for run in operands[0].runs for value in samples.get(run.key, {}).get(level or "", [])]
        for operand, value, reference in zip(operands[1:], per_operand[1:], has_reference[1:]):
            delta = {"operand": operand.text, "relative": None, "p_value": None, "samples": None,
                     "significant": None, "note": None}
            if brackets and (baseline is None or value is None) and brackets[0] and brackets[1 + len(row["deltas"])]:
                delta["note"] = ("a bracket without a number on one side or both (a coarse curve: too wide for "
                                 "one): no difference stated")
            elif baseline is None or value is None:
                delta["note"] = "not measured on both sides"
            elif baseline == 0:
                delta["note"] = "the baseline is zero"
            else:
                delta["relative"] = value / baseline - 1
            if delta["relative"] is not None and (reference or has_reference[0]):
                # A published curve gives one value per size, not the samples the test needs: the two sides
                # are not measured alike, so the difference is stated and never called significant.
                delta["note"] = "a reference host's published curve gives one value per size, not samples"
            elif level and delta["relative"] is not None:
                pooled = [value for run in operand.runs for value in samples.get(run.key, {}).get(level, [])]
                if pooled_base and pooled:
                    _unused, p_value = mann_whitney_u(pooled_base, pooled)
                    delta.update(p_value=p_value, samples=[len(pooled_base), len(pooled)],
                                 significant=abs(delta["relative"]) >= threshold and p_value < alpha)
                else:
                    delta["note"] = "no raw samples of this level's plateau on both sides: no test"
            elif delta["relative"] is not None:
                delta["note"] = "a summary figure: no samples to test"
            row["deltas"].append(delta)
        rows.append(row)
    return rows


def _bracket(runs: list[dict], column: Column) -> dict | None:
    """One operand's size bracket over its runs: the widest [low, high] of its runs' brackets, its estimate the
    median of theirs, its method theirs where they agree ('mixed' where not); None without a bracket."""
    parts = [summary.size_parts(values, column.key) for values in runs]
    parts = [part for part in parts if isinstance(part[0], (int, float)) and isinstance(part[1], (int, float))]
    if not parts:
        return None
    methods = {part[3] for part in parts if part[2] is not None}
    return {"low": min(part[0] for part in parts), "high": max(part[1] for part in parts),
            "estimate": _median([part[2] for part in parts]),
            "method": (methods.pop() if len(methods) == 1 else "mixed") if methods else None}


def bracket_text(column: Column, bracket: dict | None) -> str:
    """An operand's bracketed value for people: '32–35 KiB · sysfs 32 KiB' ('—' without a bracket)."""
    if bracket is None:
        return "—"
    return _bracket_format(column, bracket["low"], bracket["high"], bracket["estimate"], bracket["method"])


# The figure a plausibility rule casts doubt on, where it is one of the compared columns (a pattern over their keys).
FLAG_COLUMNS: dict[str, str] = {
    "dram_chase_too_fast": r"dram_latency",
    "first_plateau_above_l1_hit": r"l1_latency",
    "bandwidth_above_dram_peak": r"read_.*_gb_s",
    "huge_pages_not_granted": r"thp_granted",
}


def flagged_rows(rows: Callable[[str, tuple[str, str]], list[dict]], keys: Iterable[tuple[str, str]]
                 ) -> dict[tuple[str, str], list[dict]]:
    """The flagged plausibility rows of each (run_id, host): what `compare` shows beside the operands' figures."""
    return {key: [flag for flag in rows("derived_flags", key) if flag["status"] == "flagged"]
            for key in dict.fromkeys(keys)}


def flags_of_column(column: str, flags: list[dict]) -> list[dict]:
    """The flagged rows among `flags` whose rule casts doubt on `column` (FLAG_COLUMNS)."""
    return [flag for flag in flags if flag["rule"] in FLAG_COLUMNS and re.fullmatch(FLAG_COLUMNS[flag["rule"]], column)]


def compare_json(operands: list[Operand], rows: list[dict], threshold: float = SIGNIFICANT_CHANGE,
                 alpha: float = SIGNIFICANT_P, kinds: dict[tuple[str, str], list[dict]] | None = None,
                 flags: dict[tuple[str, str], list[dict]] | None = None) -> dict:
    """`compare --format json` (its keys are documented in README.md and pinned by a test); `kinds`: each
    core kind's hierarchy of the runs whose host has several (kind_levels); `flags`: each run's flagged
    plausibility rows (flagged_rows)."""
    runs = list(dict.fromkeys(run for operand in operands for run in operand.runs))
    return {
        "baseline": operands[0].text,
        "test": {"name": "Mann-Whitney U, two-sided, on the raw latency samples of each level's plateau",
                 "min_relative_change": threshold, "alpha": alpha},
        "operands": [{"operand": operand.text, "kind": operand.kind,
                      "reference": any(run.is_reference for run in operand.runs),
                      "runs": [{"host": run.host, "run_id": run.run_id, "microarchitecture": run.microarchitecture,
                                "inventory_groups": list(run.inventory_groups or ()), "reference": run.is_reference,
                                "reference_source": run.reference_source, "reference_tool": run.reference_tool,
                                "reference_method": run.reference_method,
                                "reference_clock_ghz": run.reference_clock_ghz,
                                "flags": [{"rule": flag["rule"], "subject": flag["subject"], "item": flag["item"],
                                           "value": flag["value"], "threshold": flag["threshold"],
                                           "unit": flag["unit"], "evidence": flag["evidence"]}
                                          for flag in (flags or {}).get(run.key, [])]}
                               for run in operand.runs]}
                     for operand in operands],
        "metrics": [{"metric": row["column"].key, "label": row["column"].header, "unit": unit_of(row["column"]),
                     "level": row["level"],
                     "values": {operand.text: value for operand, value in zip(operands, row["values"])},
                     "brackets": ({operand.text: bracket for operand, bracket in zip(operands, row["brackets"])}
                                  if row["brackets"] else None),
                     "deltas": row["deltas"]} for row in rows],
        "core_kinds": [{"host": run.host, "run_id": run.run_id, "core_kind": kind["core_kind"], "cpu": kind["cpu"],
                        "fastest": index == 0,
                        "levels": [{"level": level["level"], "size_bytes": level["capacity_bytes"],
                                    "size_low_bytes": level.get("size_low_bytes"),
                                    "size_high_bytes": level.get("size_high_bytes"), "size_method": level.get("size_method"),
                                    "sysfs_size_bytes": level["sysfs_size_bytes"], "latency_ns": level["latency_ns"],
                                    "latency_cycles": level["latency_cycles"], "page_policy": level["page_policy"]}
                                   for level in kind["levels"]]}
                       for run in runs for index, kind in enumerate((kinds or {}).get(run.key, []))],
    }


def _operand_text(row: dict, index: int) -> str:
    """An operand's figure as the table shows it: a size as its bracket with its best estimate and method ('3.4–4 MiB
    · set-load 3.6 MiB', never the estimate alone to four digits), any other figure as its value."""
    if row.get("brackets"):
        return bracket_text(row["column"], row["brackets"][index])
    return format_value(row["column"], row["values"][index])


def describe_delta(row: dict, delta: dict) -> str:
    """A significant difference in words: 'L2 latency: 4.2 ns -> 5.46 ns (+30.0%, Mann-Whitney p = 1e-05)'."""
    index = 1 + row["deltas"].index(delta)
    return (f"{delta['operand']}: {row['column'].header} {_operand_text(row, 0)} -> {_operand_text(row, index)} "
            f"({delta['relative']:+.1%}, Mann-Whitney p = {delta['p_value']:.2g})")


def moved(rows: list[dict]) -> list[str]:
    """describe_delta of every significant difference in `rows` (fleet.deltas)."""
    return [describe_delta(row, delta) for row in rows for delta in row["deltas"] if delta["significant"]]


def tests_ran(rows: list[dict]) -> bool:
    """Whether any difference in `rows` (fleet.deltas) was tested."""
    return any(delta["p_value"] is not None for row in rows for delta in row["deltas"])


def untested(rows: list[dict], threshold: float = SIGNIFICANT_CHANGE) -> list[dict]:
    """Every difference of at least `threshold` that had no test, grouped by why: [{why (the deltas' note),
    differences: ['ref-epyc-74f3-zen3: DRAM latency 170 ns -> 112 ns (-34.3%)', ...]}]."""
    found: dict[str, list[str]] = {}
    for row in rows:
        for position, delta in enumerate(row["deltas"], start=1):
            if delta["p_value"] is None and delta["relative"] is not None and abs(delta["relative"]) >= threshold:
                found.setdefault(delta["note"], []).append(
                    f"{delta['operand']}: {row['column'].header} {_operand_text(row, 0)} -> "
                    f"{_operand_text(row, position)} ({delta['relative']:+.1%})")
    return [{"why": why, "differences": differences} for why, differences in found.items()]
