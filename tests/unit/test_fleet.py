"""The fleet's methods on cases with known answers: the robust outlier score (median and MAD of the peers, a
relative floor, too few peers said so, the usual cause by figure and direction), operands resolved to runs,
the largest change between two runs, inventory groups as colour keys and the curve thinning."""

from __future__ import annotations

import math
import random

import pytest

from fleetscope.report import fleet
from fleetscope.errors import UserError
from fleetscope.report.sections import Column
from fleetscope.report.fleet_pages import inventory_keys, thin

DRAM = Column("dram_latency", "DRAM latency", "ns")
READ = Column("read_1_thread_gb_s", "read 1 thread", "gb_s")
L2_SIZE = Column("l2_size", "L2 size", "bytes")
THP = fleet.THP_GRANTED


def run(host: str, uarch: str = "Zen 3 (Milan)", recency: int = 1, groups: tuple[str, ...] | None = ("lab",),
        run_id: str | None = None, cpu: str | None = "AMD EPYC 7763") -> fleet.Run:
    return fleet.Run(host, run_id or f"20261201T000000Z-{abs(hash(host)) % 0xffffff:06x}", None, "complete", recency,
                     uarch, not uarch.startswith("unknown"), cpu, groups)


def peers(count: int, seed: int = 1, **values) -> tuple[list[fleet.Run], dict]:
    """`count` hosts whose values scatter by +-2% (a real fleet's spread) around `values`."""
    rng = random.Random(seed)
    runs = [run(f"h{index:02d}") for index in range(count)]
    return runs, {item.key: {key: value * (1 + rng.uniform(-0.02, 0.02)) for key, value in values.items()}
                  for item in runs}


def test_one_slow_host_among_its_peers_is_named_with_the_cause():
    runs, values = peers(8, dram_latency=100.0, read_1_thread_gb_s=20.0, thp_granted=1.0)
    values[runs[3].key].update(dram_latency=160.0, read_1_thread_gb_s=12.0)
    found = fleet.outliers(runs, values, [DRAM, READ, THP])
    assert {(item["host"], item["column"].key) for item in found.found} == {("h03", "dram_latency"),
                                                                          ("h03", "read_1_thread_gb_s")}
    dram = next(item for item in found.found if item["column"] is DRAM)
    assert dram["relative"] == pytest.approx(0.6, abs=0.03) and dram["peers"] == 7
    assert dram["cause"].startswith("DRAM latency up and bandwidth down together") and "memory channel" in dram["cause"]


def test_spread_within_noise_names_nobody_and_a_small_shift_is_not_enough():
    runs, values = peers(10, seed=4, dram_latency=100.0)
    assert fleet.outliers(runs, values, [DRAM]).found == []
    values[runs[0].key]["dram_latency"] = 108.0  # many MADs away, but under the 10% floor
    assert fleet.outliers(runs, values, [DRAM]).found == []


def test_identical_peers_have_no_spread_and_any_large_difference_counts():
    runs = [run(f"h{index}") for index in range(6)]
    values = {item.key: {"l2_size": 1 << 20} for item in runs}
    values[runs[5].key]["l2_size"] = 512 << 10
    (item,) = fleet.outliers(runs, values, [L2_SIZE]).found
    assert item["host"] == "h5" and math.isinf(item["robust_z"]) and item["relative"] == -0.5
    assert "step moved" in item["cause"] and "cache partition" in item["cause"]
    assert fleet.outliers_json(fleet.outliers(runs, values, [L2_SIZE]))["outliers"][0]["robust_z"] is None


def test_too_few_peers_are_reported_not_scored():
    runs, values = peers(4, dram_latency=100.0)
    values[runs[0].key]["dram_latency"] = 300.0
    result = fleet.outliers(runs, values, [DRAM])
    assert result.found == []
    (group,) = result.groups
    assert not group["scored"] and "at least 5 are needed" in group["note"]
    assert fleet.outliers(runs, values, [DRAM], min_peers=3).found  # with a lower floor it is scored


def test_peers_are_the_same_microarchitecture_or_cpu_model():
    milan = [run(f"m{index}") for index in range(6)]
    genoa = [run(f"g{index}", "Zen 4 (Genoa)", cpu="AMD EPYC 9654") for index in range(6)]
    values = {item.key: {"dram_latency": 100.0} for item in milan}
    values.update({item.key: {"dram_latency": 140.0} for item in genoa})  # another CPU: not an outlier
    assert fleet.outliers(milan + genoa, values, [DRAM]).found == []
    unknown = [run(f"u{index}", "unknown (GenuineIntel family 6, model 255)", cpu="Intel Xeon 9999") for index in range(2)]
    groups = {group["group"] for group in fleet.outliers(milan + unknown, values, [DRAM]).groups}
    assert groups == {"Zen 3 (Milan)", "CPU model Intel Xeon 9999"}
    assert {group["group"] for group in fleet.outliers(milan + genoa, values, [DRAM], by="cpu_model").groups} == {
        "AMD EPYC 7763", "AMD EPYC 9654"}


def test_a_host_better_than_its_peers_says_so():
    runs, values = peers(6, thp_granted=0.5)
    values[runs[2].key]["thp_granted"] = 1.0
    (item,) = fleet.outliers(runs, values, [THP]).found
    assert item["cause"].startswith("better than its peers")
    values[runs[2].key]["thp_granted"] = 0.1
    assert "THP setting" in fleet.outliers(runs, values, [THP]).found[0]["cause"]


def test_operands_resolve_to_runs_and_say_what_exists():
    every = [run("node1", groups=("lab", "rack_a"), run_id="20261201T000000Z-000001"),
             run("node1", recency=2, groups=("lab", "rack_a"), run_id="20261101T000000Z-000001"),
             run("node2", "Zen 4 (Genoa)", groups=("lab", "rack_b"), run_id="20261201T000000Z-000002"),
             run("node3", "Zen 4 (Raphael)", groups=None, run_id="20261201T000000Z-000003")]
    assert [item.run_id for item in fleet.resolve("node1", every).runs] == ["20261201T000000Z-000001"]
    assert fleet.resolve("node1@20261101T000000Z-000001", every).kind == "run"
    assert [item.host for item in fleet.resolve("group:lab", every).runs] == ["node1", "node2"]
    assert [item.host for item in fleet.resolve("uarch:zen4", every).runs] == ["node2", "node3"]
    assert [item.host for item in fleet.resolve("uarch:Zen 4 (Genoa)", every).runs] == ["node2"]
    with pytest.raises(UserError, match="groups: lab, rack_a, rack_b"):
        fleet.resolve("group:rack_c", every)
    with pytest.raises(UserError, match="its runs: 20261201T000000Z-000001, 20261101T000000Z-000001"):
        fleet.resolve("node1@20260101T000000Z-000000", every)
    with pytest.raises(UserError, match="the fleet has: Zen 3 \\(Milan\\); Zen 4 \\(Genoa\\); Zen 4 \\(Raphael\\)"):
        fleet.resolve("uarch:zen5", every)
    with pytest.raises(UserError, match="no host 'node9'"):
        fleet.resolve("node9", every)


def test_the_largest_change_between_two_runs():
    before = {"dram_latency": 100.0, "read_1_thread_gb_s": 20.0, "l2_size": None}
    after = {"dram_latency": 160.0, "read_1_thread_gb_s": 12.0, "l2_size": 1 << 20}
    moved = fleet.change(before, after, [DRAM, READ, L2_SIZE])
    assert moved["column"] == "dram_latency" and moved["relative"] == pytest.approx(0.6)
    assert fleet.change({}, after, [DRAM]) is None


def test_inventory_groups_every_host_shares_do_not_colour():
    keys = inventory_keys({"a": ("lab", "rack_a"), "b": ("lab", "rack_b", "gpu"), "c": ("lab",), "d": None})
    assert keys == {"a": "rack_a", "b": "rack_b + gpu", "c": "lab", "d": "(groups not recorded)"}


def test_thinning_keeps_the_ends_and_at_most_the_limit():
    rows = [{"x": 2.0**exponent, "y": exponent * 1.23456789} for exponent in range(10, 40)]
    xs, ys = thin(rows, limit=8)
    assert len(xs) == 8 and xs[0] == 1024 and xs[-1] == 2.0**39
    assert ys[1] == float(f"{ys[1]:.4g}")
    assert thin(rows[:3]) == [[1024.0, 2048.0, 4096.0], [12.35, 13.58, 14.81]]


def test_mann_whitney_exact_and_approximate():
    assert fleet.mann_whitney_u([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == (0.0, pytest.approx(0.1))
    assert fleet.mann_whitney_u([4.0, 5.0, 6.0], [1.0, 2.0, 3.0]) == (9.0, pytest.approx(0.1))
    assert fleet.mann_whitney_u([1.0, 1.0], [1.0, 1.0])[1] == 1.0
    # past 20 samples per side: normal approximation, U = 190 of 900, z = (450 - 190 - 0.5) / sqrt(900 * 61 / 12)
    u_value, p_value = fleet.mann_whitney_u([float(value) for value in range(30)], [value + 10.5 for value in range(30)])
    assert u_value == 190 and p_value == pytest.approx(math.erfc(259.5 / math.sqrt(4575) / math.sqrt(2)))
