"""The compute family in the warehouse, from real runs (tests/compute_bundles.py: a real `make run` of the compute
family merged into the real default run): the clock curve and its ratios, the turbo and ramp readings, peak FLOP/s
with FLOP per cycle, the roofline's ceilings and SAXPY's intensity against independent counts, energy per point
where a host has RAPL and the reason where it has not, the boundary that refuses a malformed reading, and the
figures the fleet, `compare` (with its roofline overlays) and `outliers` (a clock held back) put side by side."""

from __future__ import annotations

import json

import duckdb
import pytest

import compute_bundles
from fleetscope.analyze.clock import FLAT_TOLERANCE
from fleetscope.ingest.bundle import _counters_problem


def ingest(cli, results, db):
    proc = cli("ingest", results, "--db", db)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return duckdb.connect(str(db), read_only=True)


@pytest.fixture(scope="module")
def warehouse(bundle_tools, tmp_path_factory):
    _, run_cli = bundle_tools
    root = tmp_path_factory.mktemp("compute")
    compute_bundles.write_bundle(root / "results")
    connection = ingest(run_cli, root / "results", root / "fleet.duckdb")
    yield connection
    connection.close()


def rows(connection, query: str) -> list[dict]:
    cursor = connection.execute(query)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def test_the_clock_curve_holds_every_class_and_core_count_with_its_ratios(warehouse):
    curve = rows(warehouse, "SELECT * FROM core_clock_curve")
    raw = {(record["params"]["class"], record["params"]["active_cores"]): record["summary"]["median"]
           for record in compute_bundles.records("core_clock") if record["metric"] == "core_clock"}
    assert {(row["class"], row["active_cores"]): row["clock_ghz"] for row in curve} == raw
    for row in curve:
        assert row["vs_one_core"] == pytest.approx(row["clock_ghz"] / raw[(row["class"], 1)])
        assert row["vs_scalar"] == pytest.approx(row["clock_ghz"] / raw[("scalar_int", row["active_cores"])])
        assert row["newest_core_kind"] is None  # one kind on this host
        assert row["package_watts"] is None and row["throttled"] is None  # the VM has neither


def test_the_turbo_reading_calls_a_class_flat_exactly_when_its_steps_are_within_the_tolerance(warehouse):
    """The VM shows no turbo curve; what its noise leaves (a busy run read scalar_int 6% lower on one core than
    on two) is said as it is, not smoothed into 'flat'."""
    clock = rows(warehouse, "SELECT * FROM inferred_clock ORDER BY vector_bits")
    assert [row["class"] for row in clock] == ["scalar_int", "fma128", "fma256", "fma512"]
    raw = {(record["params"]["class"], record["params"]["active_cores"]): record["summary"]["median"]
           for record in compute_bundles.records("core_clock") if record["metric"] == "core_clock"}
    for row in clock:
        one, two = raw[(row["class"], 1)], raw[(row["class"], 2)]
        assert (row["one_core_ghz"], row["all_cores_ghz"], row["max_active_cores"]) == (one, two, 2)
        assert row["drop"] == pytest.approx(1 - two / one)
        assert row["flat"] is (abs(two / one - 1) <= FLAT_TOLERANCE), row
        assert row["note"].startswith("flat") is row["flat"]
        assert row["vs_scalar_one_core"] == pytest.approx(one / raw[("scalar_int", 1)])
    (ramp,) = rows(warehouse, "SELECT * FROM inferred_clock_ramp")
    assert ramp["ramps"] == 1
    # this run's VM was busy: the reading either found the clock flat or said the ramp could not be read
    assert (ramp["flat"] is True and ramp["ramp_ms"] == 0.0) or (ramp["ramp_ms"] is None and "busy" in ramp["note"])


def test_peak_flops_gives_flop_per_cycle_beside_flop_per_second(warehouse):
    flops = rows(warehouse, "SELECT * FROM peak_flops")
    assert len(flops) == 16  # scalar_fma, fma128, fma256, fma512 x fp64, fp32 x 1 and 2 threads
    for row in flops:
        assert row["flop_per_cycle_per_core"] == pytest.approx(row["gflop_s"] / row["threads"] / row["clock_ghz"])
        assert row["chains_cover_latency"] is True and row["joules_per_gflop"] is None
    per_cycle = {(row["class"], row["precision"]): row["flop_per_cycle_per_core"] for row in flops if row["threads"] == 1}
    # Zen 4: two 256-bit FMA pipes; 512-bit FMA runs on both, so it peaks where 256-bit does
    assert per_cycle[("fma256", "fp64")] == pytest.approx(16, rel=0.1)
    assert per_cycle[("fma512", "fp64")] == pytest.approx(per_cycle[("fma256", "fp64")], rel=0.1)
    assert per_cycle[("scalar_fma", "fp64")] == pytest.approx(4, rel=0.1)


def test_the_roofline_has_its_ceilings_and_saxpy_at_its_intensity(warehouse):
    roofline = rows(warehouse, "SELECT * FROM roofline")
    memory = {(row["scope"], row["name"]): row["gb_s"] for row in roofline if row["kind"] == "memory"}
    levels = dict(warehouse.execute("SELECT level, max(bandwidth_gb_s) FROM inferred_level_bandwidth "
                                    "WHERE bandwidth_gb_s > 0 GROUP BY level").fetchall())
    assert {name: gb_s for (scope, name), gb_s in memory.items() if scope == "one core"} == levels
    (dram_all,) = warehouse.execute("SELECT max(peak_gb_s) FROM thread_saturation WHERE op = 'read'").fetchone()
    assert memory[("all cores", "DRAM")] == dram_all
    compute = [row for row in roofline if row["kind"] == "compute"]
    assert {row["scope"] for row in compute} == {"one core", "all cores"} and len(compute) == 16
    for row in compute:
        assert row["ridge_flop_per_byte"] == pytest.approx(row["gflop_s"] / memory[(row["scope"], "DRAM")])
    saxpy = {row["stride_elements"]: row for row in roofline if row["kind"] == "measured"}
    # stride 1: x and y read and y written back, 24 B per update of 2 FLOP; from 8 on, a line per element of each
    assert saxpy[1]["flop_per_byte"] == pytest.approx(2 / 24)
    assert saxpy[8]["flop_per_byte"] == pytest.approx(2 / (1.5 * 2 * 64)) == saxpy[128]["flop_per_byte"]
    (ns,) = warehouse.execute("SELECT ns_per_update FROM saxpy_stride WHERE stride_elements = 1").fetchone()
    assert saxpy[1]["gflop_s"] == pytest.approx(2 / ns)


def test_energy_is_absent_with_its_reason_on_the_vm(warehouse):
    reasons = rows(warehouse, "SELECT DISTINCT energy_available, energy_reason, temperature_reason FROM point_energy "
                              "WHERE experiment IN ('core_clock', 'peak_flops')")
    assert len(reasons) == 1 and reasons[0]["energy_available"] is False
    assert "/sys/class/powercap" in reasons[0]["energy_reason"] and "hwmon" in reasons[0]["temperature_reason"]


def test_energy_per_gflop_where_the_host_has_rapl(cli, tmp_path):
    compute_bundles.write_bundle(tmp_path / "results", watts=95.0)
    connection = ingest(cli, tmp_path / "results", tmp_path / "fleet.duckdb")
    flops = rows(connection, "SELECT gflop_s, package_watts, joules_per_gflop, temperature_before_c, "
                             "temperature_after_c FROM peak_flops")
    for row in flops:
        assert row["package_watts"] == pytest.approx(95.0)
        assert row["joules_per_gflop"] == pytest.approx(95.0 / row["gflop_s"])
        assert (row["temperature_before_c"], row["temperature_after_c"]) == (48.0, 61.0)
    core = connection.execute("SELECT DISTINCT core_watts FROM point_energy WHERE experiment = 'peak_flops'").fetchall()
    assert core == [(pytest.approx(76.0),)]


@pytest.mark.parametrize("change, where", [
    (lambda e: e.update(available=False, reason=None), "energy.reason"),
    (lambda e: e["zones"][0].update(joules=-1.0), "zones[0].joules"),
    (lambda e: e["zones"][0].update(zone="../../etc"), "zones[0].zone"),
    (lambda e: e["zones"][0].update(joules=None, reason=None), "zones[0].reason"),
    (lambda e: e.update(zones=[{}] * 40), "energy.zones"),
    (lambda e: e["zones"][0].update(wrapped="no"), "zones[0].wrapped"),
])
def test_a_malformed_energy_reading_is_refused_naming_the_field(change, where):
    record = compute_bundles._with_energy(compute_bundles.records("peak_flops")[0], 50.0)
    counters = record["context"]["counters"]
    assert _counters_problem(counters) is None
    change(counters["energy"])
    problem = _counters_problem(counters)
    assert problem and where in problem, problem


def test_a_temperature_out_of_range_is_refused():
    record = compute_bundles._with_energy(compute_bundles.records("core_clock")[0], 50.0)
    record["context"]["counters"]["temperature"]["sensors"][0]["after_c"] = 1e6
    assert "sensors[0].after_c" in _counters_problem(record["context"]["counters"])


# ---- the fleet: compare and outliers -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def fleet(bundle_tools, tmp_path_factory):
    """Six hosts of one CPU, peers of each other; slow-1's all-core clock (and what it ran at it) is 12% low."""
    _, run_cli = bundle_tools
    root = tmp_path_factory.mktemp("compute-fleet")
    for index in range(5):
        compute_bundles.write_bundle(root / "results", host=f"zen-{index}", run_id=f"20261127T0{index}0000Z-a0000{index}")
    compute_bundles.write_bundle(root / "results", host="slow-1", run_id="20261127T090000Z-b00001", all_cores_clock=0.88)
    ingest(run_cli, root / "results", root / "fleet.duckdb").close()
    return root / "fleet.duckdb"


def test_outliers_names_a_clock_held_back_by_its_power_limit(cli, fleet):
    proc = cli("outliers", "--db", fleet, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    found = {(item["host"], item["metric"]): item for item in json.loads(proc.stdout)["outliers"]}
    clock = found[("slow-1", "clock_all_cores_ghz")]
    assert "power limit, cooling or BIOS setting" in clock["cause"]
    assert ("slow-1", "clock_1_core_ghz") not in found  # one core alone runs at its peers' clock
    assert not [key for key in found if key[0] != "slow-1"]


def test_compare_sets_the_clocks_and_flops_side_by_side_and_overlays_the_rooflines(cli, fleet, tmp_path):
    proc = cli("compare", "zen-0", "slow-1", "--db", fleet, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    columns = {row["metric"]: row for row in json.loads(proc.stdout)["metrics"]}
    for column in ("clock_1_core_ghz", "clock_all_cores_ghz", "fp64_1_core_gflop_s", "fp64_all_cores_gflop_s",
                   "fp64_flop_per_cycle"):
        assert column in columns, sorted(columns)
    assert columns["clock_all_cores_ghz"]["deltas"][0]["relative"] == pytest.approx(-0.12, abs=0.005)
    page = tmp_path / "compare.html"
    proc = cli("compare", "zen-0", "slow-1", "--db", fleet, "--out", page)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text()
    assert "Roofline, one core (FP64, DRAM)" in html and "Roofline, all cores (FP64, DRAM)" in html
