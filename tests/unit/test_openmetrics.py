"""`fleetscope export --openmetrics` on real bundles (tests/nightly_bundles.py), read back with prometheus_client's
OpenMetrics parser and its Prometheus text-format parser (the format node_exporter's textfile collector reads):
stable names with their units, HELP lines, each value the one the fleet's figures hold in base units, no sample for
what was not measured, and the example Grafana dashboard's queries naming only metrics and labels the export writes."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as text_format_families

from fleetscope.report import fleet, openmetrics
from fleetscope.store.warehouse import open_read_only

PROJECT = Path(__file__).resolve().parents[2]
DASHBOARD = PROJECT / "docs" / "grafana-dashboard.json"
WORKLOAD_RUN = PROJECT / "tests" / "fixtures" / "workload_run" / "results"
# The default run's TLB curve has one point per octave: its L1 step's bracket (64-128 pages) is too wide for a count,
# so the export has no TLB sample rather than a midpoint (method version 11); the two nights ran no compute family
# nor the workloads.
NOT_MEASURED_YET = {"fleetscope_tlb_entries", "fleetscope_core_clock_hertz", "fleetscope_peak_flops",
                    "fleetscope_reference_workload_seconds"}
NOT_MEASURED_LABELS = {"fleetscope_tlb_entries": {"host", "level"}}


@pytest.fixture(scope="module")
def exported(two_nights, bundle_tools, tmp_path_factory):
    cli = bundle_tools[1]
    out = tmp_path_factory.mktemp("textfile") / "fleetscope.prom"
    proc = cli("export", "--db", two_nights[1], "--openmetrics", out)
    assert proc.returncode == 0, proc.stderr
    assert f"to {out}" in proc.stdout and ("no host has fleetscope_tlb_entries, fleetscope_core_clock_hertz, "
                                           "fleetscope_peak_flops, fleetscope_reference_workload_seconds yet"
                                           in proc.stdout)
    assert [path.name for path in out.parent.iterdir()] == ["fleetscope.prom"]  # no temporary file left beside it
    return out.read_text()


@pytest.fixture(scope="module")
def compute_exported(compute_fleet, bundle_tools, tmp_path_factory):
    out = tmp_path_factory.mktemp("textfile-compute") / "fleetscope.prom"
    proc = bundle_tools[1]("export", "--db", compute_fleet[1], "--openmetrics", out)
    assert proc.returncode == 0, proc.stderr
    assert "fleetscope_core_clock_hertz" not in proc.stdout and "fleetscope_peak_flops" not in proc.stdout
    return out.read_text()


def samples_by_family(text: str) -> dict[str, list]:
    return {family.name: family.samples for family in openmetrics_families(text)}


def test_the_export_parses_as_openmetrics_and_as_the_textfile_collector_s_format(exported):
    families = {family.name: family for family in openmetrics_families(exported)}
    assert set(families) == {metric.family for metric in openmetrics.METRICS}
    for metric in openmetrics.METRICS:
        family = families[metric.family]
        assert family.type == "gauge" and family.documentation == metric.help and family.unit == metric.unit
        assert not metric.unit or metric.family.endswith("_" + metric.unit)  # the unit is in the name
        assert all(sample.timestamp is None for sample in family.samples)   # the textfile collector refuses them
    assert exported.endswith("# EOF\n")
    assert {family.name for family in text_format_families(exported)} == set(families)
    assert {name for name, family in families.items() if not family.samples} == NOT_MEASURED_YET


def test_values_are_the_fleet_s_figures_in_base_units(exported, two_nights):
    samples = samples_by_family(exported)

    def value(family: str, **labels) -> float:
        (found,) = [sample.value for sample in samples[family]
                    if {key: sample.labels.get(key) for key in labels} == labels]
        return found

    with open_read_only(two_nights[1]) as connection:
        latest = {run.host: run for run in fleet.runs(connection) if run.recency == 1}
        keys = [run.key for run in latest.values()]
        values = fleet.run_values(fleet.batch(connection, keys).rows, keys)
    for host, run in latest.items():
        figures = values[run.key]
        for level in ("l1", "l2", "l3"):
            assert value("fleetscope_cache_latency_seconds", host=host, level=level.upper()) == pytest.approx(
                figures[f"{level}_latency"] * 1e-9, rel=1e-9)
            # the size bracket always; the best estimate only where there is one (a coarse L3 bracket has none)
            lower = value("fleetscope_cache_size_lower_bytes", host=host, level=level.upper())
            upper = value("fleetscope_cache_size_upper_bytes", host=host, level=level.upper())
            assert (lower, upper) == (figures[f"{level}_size_low"], figures[f"{level}_size_high"]) and lower < upper
            sizes = [sample.value for sample in samples["fleetscope_cache_size_bytes"]
                     if sample.labels == {"host": host, "level": level.upper()}]
            assert sizes == ([figures[f"{level}_size"]] if figures[f"{level}_size"] is not None else [])
            assert all(lower <= size <= upper for size in sizes)
        assert value("fleetscope_dram_latency_seconds", host=host) == pytest.approx(figures["dram_latency"] * 1e-9, rel=1e-9)
        assert value("fleetscope_dram_read_bandwidth_bytes_per_second", host=host, threads="1") == pytest.approx(
            figures["read_1_thread_gb_s"] * 1e9, rel=1e-9)
        # a TLB bracket too wide for a count: its figure is none and so is its sample, never a midpoint
        assert figures["tlb_l1_entries"] is None and figures["tlb_l1_entries_low"] < figures["tlb_l1_entries_high"]
        assert not [sample for sample in samples["fleetscope_tlb_entries"] if sample.labels["host"] == host]
        assert value("fleetscope_storage_p99_latency_seconds", host=host, direction="read") == pytest.approx(
            figures["storage_p99_read_ns"] * 1e-9, rel=1e-9)
        assert value("fleetscope_plausibility_flags", host=host) == figures["flagged"]
        started = datetime.fromisoformat("2026-12-01T02:15:00+00:00").timestamp()
        assert value("fleetscope_run_started_timestamp_seconds", host=host) == started
        age = value("fleetscope_run_age_seconds", host=host)
        assert age == pytest.approx(datetime.now(UTC).timestamp() - started, abs=600)  # negative: the fixture is in the future
    assert not [sample for sample in samples["fleetscope_cache_latency_seconds"] if sample.labels["level"] == "DRAM"]
    changed = {sample.labels["host"]: sample.value for sample in samples["fleetscope_changed_since_previous_run"]}
    assert changed == {"rpl-03": 1, "zen3-01": 0}  # n1-01 has one run: no sample
    (info,) = [sample for sample in samples["fleetscope_run_info"] if sample.labels["host"] == "zen3-01"]
    assert info.labels["microarchitecture"] == "Zen 3 (Vermeer)" and info.labels["run_id"] == "20261201T021500Z-0b0b0b"


def test_the_compute_figures_are_the_fleet_s_clock_and_fp64_flops(compute_exported, compute_fleet):
    samples = samples_by_family(compute_exported)
    clocks = {(sample.labels["host"], sample.labels["cores"]): sample.value
              for sample in samples["fleetscope_core_clock_hertz"]}
    flops = {(sample.labels["host"], sample.labels["precision"], sample.labels["cores"]): sample.value
             for sample in samples["fleetscope_peak_flops"]}
    with open_read_only(compute_fleet[1]) as connection:
        latest = {run.host: run for run in fleet.runs(connection) if run.recency == 1}
        keys = [run.key for run in latest.values()]
        values = fleet.run_values(fleet.batch(connection, keys).rows, keys)
    assert set(clocks) == {(host, cores) for host in latest for cores in ("1", "all")}
    assert set(flops) == {(host, "fp64", cores) for host in latest for cores in ("1", "all")}
    for host, run in latest.items():
        figures = values[run.key]
        assert clocks[host, "1"] == pytest.approx(figures["clock_1_core_ghz"] * 1e9, rel=1e-9)
        assert clocks[host, "all"] == pytest.approx(figures["clock_all_cores_ghz"] * 1e9, rel=1e-9)
        assert flops[host, "fp64", "1"] == pytest.approx(figures["fp64_1_core_gflop_s"] * 1e9, rel=1e-9)
        assert flops[host, "fp64", "all"] == pytest.approx(figures["fp64_all_cores_gflop_s"] * 1e9, rel=1e-9)
        assert 0.3e9 < clocks[host, "1"] < 7e9 and flops[host, "fp64", "1"] > 1e9  # hertz and FLOP/s, not GHz
    # slow-1's all-core figures were written at 0.88 x zen-1's: the export carries the held-back clock, not the one-core one
    assert clocks["slow-1", "all"] / clocks["zen-1", "all"] == pytest.approx(0.88, rel=1e-9)
    assert flops["slow-1", "fp64", "all"] / flops["zen-1", "fp64", "all"] == pytest.approx(0.88, rel=1e-9)


def test_label_values_from_hosts_are_escaped():
    hostile = 'rack "a"\\b\nc'
    line = openmetrics._sample(openmetrics.METRICS[-1], {"host": hostile}, 1)
    text = f"# TYPE fleetscope_run_info gauge\n{line}\n# EOF\n"
    ((sample,),) = [family.samples for family in openmetrics_families(text)]
    assert sample.labels["host"] == hostile
    assert openmetrics.format_value(1.2 * 1e-9) == "1.2e-09" and openmetrics.format_value(33554432.0) == "33554432"


def test_the_grafana_dashboard_reads_only_what_the_export_writes(exported, compute_exported, workload_exported):
    dashboard = json.loads(DASHBOARD.read_text())
    families = {family.name: family for family in openmetrics_families(exported)}
    labels = {name: {key for sample in family.samples for key in sample.labels} for name, family in families.items()}
    labels.update(NOT_MEASURED_LABELS)
    labels.update({family.name: {key for sample in family.samples for key in sample.labels}
                   for text in (compute_exported, workload_exported[0])
                   for family in openmetrics_families(text) if family.name in NOT_MEASURED_YET and family.samples})
    assert all(labels[name] for name in NOT_MEASURED_YET)
    assert [item["name"] for item in dashboard["__inputs"]] == ["DS_PROMETHEUS"]
    expressions = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    expressions += [variable["definition"] for variable in dashboard["templating"]["list"]]
    assert len(expressions) >= 15
    used = set()
    for expression in expressions:
        assert expression.count("(") == expression.count(")") and expression.count("{") == expression.count("}")
        for name, matchers in re.findall(r"\b(fleetscope_[a-z0-9_]+)(?:\{([^}]*)\})?", expression):
            assert name in families, f"{expression}: no metric {name} in the export"
            used.add(name)
            for label in re.findall(r"([a-z_]+)\s*=~?", matchers):
                assert label in labels[name], f"{expression}: {name} has no label {label}"
        for label in re.findall(r"\{\{(\w+)\}\}", json.dumps(expression)):
            assert any(label in labels[name] for name in used)
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}" and panel["targets"], panel["title"]
        for target in panel["targets"]:
            for label in re.findall(r"\{\{(\w+)\}\}", target["legendFormat"]):
                names = re.findall(r"\b(fleetscope_[a-z0-9_]+)", target["expr"])
                assert all(label in labels[name] for name in names), (panel["title"], label)
    # every headline family has a panel (run age through the start timestamp)
    assert used >= set(families) - {"fleetscope_run_age_seconds", "fleetscope_cache_size_lower_bytes",
                                    "fleetscope_cache_size_upper_bytes", "fleetscope_thp_granted_ratio"}



@pytest.fixture(scope="module")
def workload_exported(bundle_tools, tmp_path_factory):
    """The real workload run (tests/fixtures/workload_run) in a warehouse, and its export: (text, warehouse)."""
    cli = bundle_tools[1]
    root = tmp_path_factory.mktemp("textfile-workload")
    db, out = root / "fleet.duckdb", root / "fleetscope.prom"
    assert cli("ingest", WORKLOAD_RUN, "--db", db).returncode == 0
    proc = cli("export", "--db", db, "--openmetrics", out)
    assert proc.returncode == 0, proc.stderr
    return out.read_text(), db


def test_the_reference_workload_s_wall_time_is_the_fleet_s(workload_exported):
    text, db = workload_exported
    (sample,) = samples_by_family(text)["fleetscope_reference_workload_seconds"]
    with open_read_only(db) as connection:
        (run,) = [run for run in fleet.runs(connection) if run.recency == 1]
        figures = fleet.run_values(fleet.batch(connection, [run.key]).rows, [run.key])[run.key]
    assert sample.labels["host"] == run.host and 0 < sample.value == pytest.approx(figures["reference_workload_s"], rel=1e-9)
