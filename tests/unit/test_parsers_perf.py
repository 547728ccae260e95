"""The `perf stat -x,` parser on every real output in tests/fixtures/perf_samples (a copy of ../shared/fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetscope.ingest.parsers import ParseError, perf

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "perf_samples"


def parse(name: str) -> dict:
    path = SAMPLES / name
    assert path.is_file(), f"fixture {path} is missing: tests/fixtures holds copies of the shared fixtures"
    return perf.parse(path.read_text(encoding="utf-8"), source=name)


def event(parsed: dict, printed: str) -> dict:
    (found,) = [e for e in parsed["events"] if e["event"] == printed]
    return found


TESTED = {
    "rpl_i9-13900KF_hybrid_saxpy.perf.csv", "tgl_i5-1135G7_wsl2_affinity_user_events_not_supported.csv",
    "tgl_i5-1135G7_wsl2_raw_stride1024.perf.csv", "tgl_i5-1135G7_wsl2_saxpy_local.perf.csv",
    "tgl_i5-1135G7_wsl2_saxpy_tlb_huge.perf.csv", "tgl_i5-1135G7_wsl2_smt_perf.csv",
    # perf's human-readable perf stat and perf report profiles: tests/unit/test_workload_profiling.py
    "hakmem_phase44_perf_stat.txt", "hakmem_phase44_perf_record_top20_cycles.txt",
    "hakmem_phase44_perf_record_top12_cache_misses.txt", "devvm_python_cpu_clock.perf-report.txt",
}


def test_every_perf_sample_is_tested():
    assert SAMPLES.is_dir(), f"{SAMPLES} is missing: tests/fixtures holds copies of the shared fixtures"
    assert {path.name for path in SAMPLES.iterdir() if path.name != "SOURCES.md"} == TESTED


def test_hybrid_pmus_multiplexing_and_not_supported():
    parsed = parse("rpl_i9-13900KF_hybrid_saxpy.perf.csv")
    assert parsed["hybrid"] is True and parsed["started_on"] is None and len(parsed["events"]) == 8
    atom = event(parsed, "cpu_atom/cache-references/")
    assert (atom["pmu"], atom["name"], atom["value"], atom["run_time_ns"], atom["running_percent"]) == (
        "cpu_atom", "cache-references", 245719457, 548454, 0.0)
    assert atom["multiplexed"] is True and atom["state"] == "counted"
    core = event(parsed, "cpu_core/cache-misses/")
    assert (core["value"], core["running_percent"], core["metric_value"], core["metric_unit"]) == (
        167794821, 99.0, 94.54, "of all cache refs")
    unsupported = event(parsed, "cpu_atom/L1-dcache-load-misses/")
    assert (unsupported["state"], unsupported["value"], unsupported["run_time_ns"], unsupported["line"]) == (
        "not supported", None, 0, 7)
    assert unsupported["multiplexed"] is False
    assert event(parsed, "cpu_core/L1-dcache-load-misses/")["value"] == 98211830
    assert event(parsed, "cpu_core/LLC-load-misses/")["value"] == 64421167


def test_user_space_modifiers_and_not_supported_under_wsl2():
    parsed = parse("tgl_i5-1135G7_wsl2_affinity_user_events_not_supported.csv")
    cycles = event(parsed, "cycles:u")
    assert (cycles["name"], cycles["modifiers"], cycles["pmu"], cycles["value"]) == ("cycles", "u", None, 1645138117)
    instructions = event(parsed, "instructions:u")
    assert (instructions["metric_value"], instructions["metric_unit"]) == (1.91, "insn per cycle")
    assert event(parsed, "LLC-load-misses:u")["state"] == "not supported"
    misses = event(parsed, "branch-misses:u")
    assert (misses["value"], misses["metric_value"], misses["metric_unit"], misses["line"]) == (3210, 0.0, "of all branches", 6)
    assert parsed["hybrid"] is False


def test_started_on_header_and_empty_metric_columns():
    parsed = parse("tgl_i5-1135G7_wsl2_raw_stride1024.perf.csv")
    assert parsed["started_on"] == "Tue Sep 30 10:54:23 2025"
    assert [(e["line"], e["name"], e["value"]) for e in parsed["events"]] == [
        (3, "cycles", 11901905531), (4, "instructions", 1165484293), (5, "cache-misses", 441083970)]
    assert event(parsed, "instructions")["metric_value"] == 0.10
    assert event(parsed, "cache-misses")["metric_value"] is None
    assert {e["run_time_ns"] for e in parsed["events"]} == {7405152500}


@pytest.mark.parametrize(("name", "started", "task_clock", "cpus", "cycles", "ghz", "tlb_misses"), [
    ("tgl_i5-1135G7_wsl2_saxpy_local.perf.csv", "Sun Sep 21 14:37:09 2025", 3475.21, 1.059, 9620983247, 2.768, 2784110),
    ("tgl_i5-1135G7_wsl2_saxpy_tlb_huge.perf.csv", "Sun Sep 21 14:37:15 2025", 399.34, 1.061, 1569626476, 3.931, 804824),
])
def test_task_clock_in_msec_and_derived_metrics(name, started, task_clock, cpus, cycles, ghz, tlb_misses):
    parsed = parse(name)
    assert parsed["started_on"] == started
    clock = event(parsed, "task-clock")
    assert (clock["value"], clock["unit"], clock["metric_value"], clock["metric_unit"]) == (task_clock, "msec", cpus, "CPUs utilized")
    assert (event(parsed, "cycles")["value"], event(parsed, "cycles")["metric_value"]) == (cycles, ghz)
    assert event(parsed, "dTLB-load-misses")["value"] == tlb_misses
    samples = {s["metric"]: s for s in perf.rows(parsed)}
    assert (samples["task-clock"]["value"], samples["task-clock"]["unit"]) == (task_clock, "ms")
    assert samples["cycles"]["unit"] == "count" and samples["cycles:GHz"]["value"] == ghz


def test_smt_run():
    parsed = parse("tgl_i5-1135G7_wsl2_smt_perf.csv")
    assert event(parsed, "cycles:u")["value"] == 2389462503
    assert event(parsed, "instructions:u")["metric_value"] == 1.42
    assert (event(parsed, "branch-misses:u")["value"], event(parsed, "branch-misses:u")["metric_value"]) == (170017, 0.06)
    assert event(parsed, "LLC-load-misses:u")["state"] == "not supported"


def test_other_perf_stat_layouts():
    interval = perf.parse("     1.001070391,123456,,cycles,1000123,100.00,,\n"
                          "     1.001070391,<not counted>,,instructions,0,0.00,,\n", "i.csv")
    assert [(e["interval_s"], e["name"], e["value"], e["state"]) for e in interval["events"]] == [
        (1.001070391, "cycles", 123456, "counted"), (1.001070391, "instructions", None, "not counted")]
    per_socket = perf.parse("S0,8,123456,,cycles,1000123,100.00,,\n", "s.csv")["events"][0]
    assert (per_socket["aggregate"], per_socket["aggregate_cpus"], per_socket["value"]) == ("S0", 8, 123456)
    per_cpu = perf.parse("CPU3,555,,cycles,1000,100.00,,\n", "c.csv")["events"][0]
    assert (per_cpu["aggregate"], per_cpu["value"]) == ("CPU3", 555)
    raw = perf.parse("1234,,cpu/event=0x3c,umask=0x0/u,1000,50.00,,\n", "r.csv")["events"][0]
    assert (raw["pmu"], raw["name"], raw["modifiers"], raw["multiplexed"]) == ("cpu", "event=0x3c,umask=0x0", "u", True)
    repeated = perf.parse("123,,cycles,1.23%,1000,100.00,,\n", "v.csv")["events"][0]
    assert (repeated["variance_percent"], repeated["run_time_ns"]) == (1.23, 1000)
    old = perf.parse("42,,cycles\n", "o.csv")["events"][0]
    assert (old["value"], old["run_time_ns"], old["running_percent"]) == (42, None, None)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("", 1, "no perf stat rows"),
    ("# started on Tue Sep 30 10:54:23 2025\n\n", 2, "no perf stat rows"),
    ("garbage\n", 1, "expected a `perf stat -x,` row"),
    ("12,,cycles,100,100.00,,\nlots,,instructions,100,100.00,,\n", 2, "value of instructions"),
    ("12,,cycles,100,fast,,\n", 1, "% running of cycles"),
    ("12,,,100,100.00,,\n", 1, "event name"),
    (" Performance counter stats for './saxpy':\n", 1, "no counter rows"),  # perf's own table, with no rows
])
def test_unreadable_rows_name_file_and_line(text, line, message):
    with pytest.raises(ParseError) as raised:
        perf.parse(text, "p.csv")
    assert str(raised.value).startswith(f"p.csv:{line}: ") and message in str(raised.value)


def test_long_format_rows_skip_uncounted_events():
    parsed = parse("rpl_i9-13900KF_hybrid_saxpy.perf.csv")
    samples = perf.rows(parsed)
    assert len(samples) == 7 + 2  # 7 counted events, 2 derived "of all cache refs" metrics
    assert samples[0] == {"metric": "cache-references", "value": 245719457, "unit": "count",
                          "params": {"pmu": "cpu_atom", "running_percent": 0.0}}
    assert not any(s["metric"] == "L1-dcache-load-misses" and s["params"]["pmu"] == "cpu_atom" for s in samples)
    for path in sorted(SAMPLES.glob("*.csv")):
        parsed = perf.parse(path.read_text(encoding="utf-8"), path.name)
        assert json.loads(json.dumps(parsed)) == parsed
