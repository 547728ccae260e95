"""`fleetscope export --openmetrics FILE`: each lab host's latest headline figures for a monitoring stack.

The figures are the ones the host pages' summaries, the fleet page, `compare` and `check` show, read by the
same code (fleetscope.report.fleet, fleetscope.report.summary), written in the OpenMetrics text format with
stable metric names, units in the names (base units: seconds, bytes, bytes per second, hertz) and a HELP line
each. The file is meant for node_exporter's textfile collector, which reads the Prometheus text format: so
every family is a gauge and no sample carries a timestamp (the collector refuses them); what is specific to
OpenMetrics (`# UNIT`, `# EOF`) is a comment to that parser. The file is replaced atomically (written beside it,
then renamed), as the collector asks.

A figure a run did not measure has no sample (never a made-up value); its family is still declared, so the
names are stable from the first export on. Reference hosts (published curves) are not lab machines and are
not exported. METRICS is the one table of names: a new headline figure is one row.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from fleetscope.report import check, fleet, summary
from fleetscope.report.derived_tables import derived_rows

PREFIX = "fleetscope_"
NS = 1e-9      # ns -> seconds
GB = 1e9       # GB/s -> bytes/s (GB/s is 1e9 B/s throughout fleetscope)
GHZ = 1e9      # GHz -> Hz


@dataclass(frozen=True)
class Metric:
    """One metric family: its name (without PREFIX, ending in its unit), OpenMetrics unit, help, and the
    headline figure(s) it is written from: {fleet column key: (extra labels, factor to the base unit)}."""
    name: str
    unit: str
    help: str
    figures: tuple[tuple[str, tuple[tuple[str, str], ...], float], ...] = ()

    @property
    def family(self) -> str:
        return PREFIX + self.name


# Per-level families (cache_*) are written from the inferred levels themselves; the rest from the fleet's columns.
# core_clock and peak_flops are the compute family's headline figures (fleetscope.report.sections.compute).
METRICS: tuple[Metric, ...] = (
    Metric("cache_latency_seconds", "seconds",
           "Load-to-use latency of each inferred cache level (the pointer chase's plateau; THP pages where the run had "
           "them, the fastest core kind)"),
    Metric("cache_size_bytes", "bytes",
           "Effective size of each inferred cache level: the best estimate (sysfs or published where the measured "
           "bracket holds it, else the curve's own); absent where the bracket is too wide for a number"),
    Metric("cache_size_lower_bytes", "bytes",
           "Lower end of each inferred cache level's size bracket: the measured size below the point of its rise "
           "that sets its size (onset or set-load)"),
    Metric("cache_size_upper_bytes", "bytes",
           "Upper end of each inferred cache level's size bracket: the measured size above that point"),
    Metric("cache_sysfs_size_bytes", "bytes", "Size of each cache level as the host's sysfs reports it (per instance)"),
    Metric("dram_latency_seconds", "seconds", "Idle DRAM load-to-use latency (the latency curve's last plateau)",
           (("dram_latency", (), NS),)),
    Metric("dram_read_bandwidth_bytes_per_second", "bytes_per_second",
           "DRAM-sized read bandwidth of the thread sweep, with one thread and with all the threads it ran",
           (("read_1_thread_gb_s", (("threads", "1"),), GB), ("read_all_threads_gb_s", (("threads", "all"),), GB))),
    Metric("tlb_entries", "", "Data TLB entries inferred from the TLB reach curve (smallest page size), per TLB level",
           (("tlb_l1_entries", (("level", "L1"),), 1.0), ("tlb_l2_entries", (("level", "L2"),), 1.0))),
    Metric("memory_level_parallelism", "", "Largest memory-level parallelism MLP(k) = t(1) / t(k) measured",
           (("mlp", (), 1.0),)),
    Metric("storage_p99_latency_seconds", "seconds",
           "99th-percentile latency of random 4 KiB-class I/O at queue depth 1 (fio), per direction",
           (("storage_p99_read_ns", (("direction", "read"),), NS), ("storage_p99_write_ns", (("direction", "write"),), NS))),
    Metric("core_clock_hertz", "hertz",
           "Core clock under load (core_clock's integer class: an L1-resident dependent-add loop per thread), with one "
           "core active and with all (one thread per physical core)",
           (("clock_1_core_ghz", (("cores", "1"),), GHZ), ("clock_all_cores_ghz", (("cores", "all"),), GHZ))),
    Metric("peak_flops", "",
           "Peak FP64 floating-point operations per second (peak_flops, the widest vector class measured), on one "
           "core and on all",
           (("fp64_1_core_gflop_s", (("precision", "fp64"), ("cores", "1")), 1e9),
            ("fp64_all_cores_gflop_s", (("precision", "fp64"), ("cores", "all")), 1e9))),
    Metric("reference_workload_seconds", "seconds",
           "Median wall time of a run of the reference workload (workloads role: alloc_walk, the same program on every "
           "host; its live set follows the run's profile, so compare hosts run with the same profile)",
           (("reference_workload_s", (), 1.0),)),
    Metric("thp_granted_ratio", "ratio", "Smallest share of the huge pages the latency sweep asked for that the kernel granted",
           (("thp_granted", (), 1.0),)),
    Metric("plausibility_flags", "", "Plausibility checks that flagged the run (0: every check passed or did not apply)",
           (("flagged", (), 1.0),)),
    Metric("changed_since_previous_run", "",
           "1 when a figure moved beyond `fleetscope check`'s default thresholds since the host's previous run, else 0 "
           "(absent for a host with one run)"),
    Metric("run_started_timestamp_seconds", "seconds", "When the host's latest run started (Unix time)"),
    Metric("run_age_seconds", "seconds", "Age of the host's latest run when this file was written (negative when the "
           "host's clock was ahead of the controller's)"),
    Metric("run_info", "", "The host's latest run: its id, status, CPU model and microarchitecture (value 1)"),
)
_LEVEL_FAMILIES = {"cache_latency_seconds": "latency_ns", "cache_size_bytes": "capacity_bytes",
                   "cache_size_lower_bytes": "size_low_bytes", "cache_size_upper_bytes": "size_high_bytes",
                   "cache_sysfs_size_bytes": "sysfs_size_bytes"}


def escape_label(value: object) -> str:
    """A label value as the text formats quote it: backslash, double quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value: ten significant digits (far beyond any measurement's), never a float's binary noise."""
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return f"{value:.10g}"


def _sample(metric: Metric, labels: dict[str, object], value: float | None) -> str | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return None
    text = ",".join(f'{name}="{escape_label(label)}"' for name, label in labels.items())
    return f"{metric.family}{{{text}}} {format_value(value)}"


@dataclass
class Export:
    text: str
    hosts: int
    samples: int
    families_without_samples: list[str]


def _levels(rows: list[dict]) -> list[dict]:
    """The levels the summary shows (summary.levels); a relative reference curve has no absolute latency."""
    return [level for level in summary.levels({"inferred_levels": rows}) if level.get("level")]


def render(connection: duckdb.DuckDBPyConnection, now: datetime | None = None) -> Export:
    """The OpenMetrics text of every lab host's latest run."""
    now = now or datetime.now(UTC)
    latest = [run for run in fleet.runs(connection) if run.recency == 1 and not run.is_reference]
    keys = [run.key for run in latest]
    batch = fleet.batch(connection, keys)
    values = fleet.run_values(batch.rows, keys)
    moved = check.check(connection, [run.host for run in latest], check.Baseline("previous", "previous"), []) \
        if latest else None
    changed = {item.host: item.state == "changed" for item in (moved.hosts if moved else []) if item.baseline}
    samples: dict[str, list[str]] = {metric.name: [] for metric in METRICS}
    by_name = {metric.name: metric for metric in METRICS}

    def add(name: str, labels: dict[str, object], value: float | None) -> None:
        line = _sample(by_name[name], labels, value)
        if line is not None:
            samples[name].append(line)

    for run in sorted(latest, key=lambda run: run.host):
        host = {"host": run.host}
        run_values = values[run.key]
        for level in _levels(derived_rows(lambda query, key=run.key: batch.rows(query, key))["inferred_levels"]):
            labels = {**host, "level": level["level"]}
            for name, column in _LEVEL_FAMILIES.items():
                if level["level"] == "DRAM":
                    continue  # DRAM is no cache: its latency is dram_latency_seconds, and it has no size
                value = level.get(column)
                if column == "latency_ns":
                    value = None if level.get("relative_to_l1") or value is None else value * NS
                add(name, labels, value)
        for metric in METRICS:
            for key, extra, factor in metric.figures:
                value = run_values.get(key)
                add(metric.name, {**host, **dict(extra)}, value * factor if isinstance(value, (int, float)) else None)
        if run.host in changed:
            add("changed_since_previous_run", host, 1 if changed[run.host] else 0)
        started = check.as_utc(run.started_at)
        if started is not None:
            add("run_started_timestamp_seconds", host, started.timestamp())
            # as it is: negative when the host's clock ran ahead of this one (its started_at is the host's word)
            add("run_age_seconds", host, (now - started).total_seconds())
        add("run_info", {**host, "run_id": run.run_id, "status": run.status or "unknown",
                         "cpu_model": run.cpu_model_name or "", "microarchitecture": run.microarchitecture}, 1)
    lines = []
    for metric in METRICS:
        lines.append(f"# TYPE {metric.family} gauge")
        if metric.unit:
            lines.append(f"# UNIT {metric.family} {metric.unit}")
        lines.append(f"# HELP {metric.family} {_help(metric.help)}")
        lines.extend(samples[metric.name])
    lines.append("# EOF")
    return Export("\n".join(lines) + "\n", len(latest), sum(len(found) for found in samples.values()),
                  [metric.family for metric in METRICS if not samples[metric.name]])


def write(text: str, out: Path) -> None:
    """Replace `out` atomically (a temporary file in its folder, then a rename): node_exporter never reads half a file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
