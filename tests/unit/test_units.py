"""fleetscope.units: every number a page shows, in units chosen for reading and never in scientific notation."""

from __future__ import annotations

import random
import re

import pytest

from fleetscope.units import (QUANTITIES, choose_unit, format_bytes, format_count, format_gb_s, format_iops,
                              format_number, format_quantity, format_time_ns, format_with_unit, readable_text)

SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize(("value", "text"), [
    (0, "0"), (1, "1"), (1.5, "1.5"), (4.2049, "4.2"), (0.0842, "0.0842"), (83.24, "83.2"), (99.95, "100"),
    (160.4, "160"), (1234.5, "1,234"), (18770, "18,770"), (8.839e-05, "0.0001"), (-0.00001, "0"), (-2.49097, "-2.49"),
    (1e15, "1,000,000,000,000,000"),
])
def test_numbers_keep_three_significant_digits_in_plain_decimals(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (512, "512 B"), (32768, "32 KiB"), (49152, "48 KiB"), (46341, "45.25 KiB"), (1048576, "1 MiB"),
    (3 * 2**20 // 2, "1.5 MiB"), (268435456, "256 MiB"), (2013265920, "1.875 GiB"), (2**40, "1 TiB"),
])
def test_sizes_are_iec(value, text):
    assert format_bytes(value) == text


def test_sizes_of_what_is_not_a_number_are_shown_as_they_are():
    assert format_bytes(None) == "" and format_bytes("unavailable") == "unavailable" and format_bytes(True) == "True"


@pytest.mark.parametrize(("nanoseconds", "text"), [
    (1.2598, "1.26 ns"), (83.2, "83.2 ns"), (999, "999 ns"), (1234.5, "1.23 µs"), (53060, "53.1 µs"),
    (284672, "285 µs"), (4.5e6, "4.5 ms"), (3.2e9, "3.2 s"),
])
def test_times_pick_their_unit_by_magnitude(nanoseconds, text):
    assert format_time_ns(nanoseconds) == text


def test_zero_prints_in_the_unit_it_came_in():
    """Zero has no magnitude to pick a unit by: a skipped experiment's 0 s of wall time is '0 s', not '0 ns'."""
    assert format_with_unit(0.0, "s") == "0 s" and format_with_unit(0, "GB/s") == "0 GB/s"
    assert format_with_unit(0.0, "ns") == "0 ns" and format_with_unit(0.4, "s") == "400 ms"


def test_rates_and_operation_rates():
    assert format_gb_s(14.7488) == "14.7 GB/s" and format_gb_s(0.412) == "412 MB/s"
    assert format_iops(18770) == "18.8 k IOPS" and format_iops(812) == "812 IOPS" and format_iops(2.5e6) == "2.5 M IOPS"
    assert format_quantity(120.6, "us") == "121 µs" and format_quantity(0.5, "s") == "500 ms"
    assert format_count(16384) == "16,384"


def test_a_value_with_its_unit_name_reads_in_that_quantity():
    assert format_with_unit(25.8799, "GB/s") == "25.9 GB/s"
    assert format_with_unit(429.604, "ns") == "430 ns" and format_with_unit(53060, "ns") == "53.1 µs"
    assert format_with_unit(1.0, "fraction") == "1 fraction" and format_with_unit(None, "ns") == ""


def test_a_section_gets_one_unit_from_its_median_and_its_largest_value():
    storage_ns = [61_440, 86_016, 284_672, 370_688, 411_648, 569_344, 3_981_312]  # fio percentiles
    assert choose_unit("time", storage_ns).symbol == "µs"
    assert choose_unit("time", [1.2, 4.5, 38.8, 170.4]).symbol == "ns"
    ladder_b_per_s = [2e7, 1e8, 5e8, 1e9, 2e9, 4e9, 8e9, 1.5e10]  # a loaded-latency ladder, idle to full load
    assert choose_unit("rate", ladder_b_per_s).symbol == "GB/s"
    assert choose_unit("rate", [1e8, 4e8]).symbol == "MB/s"
    assert choose_unit("time", [5e3, 8e3, 2e7]).symbol == "ms"  # 20,000 µs would need five digits
    assert choose_unit("time", []) == QUANTITIES["time"][0]
    assert choose_unit("time", [None, 0.0]) == QUANTITIES["time"][0]


def test_free_text_gets_readable_numbers():
    assert readable_text("working sets 4096 B .. 2013265920 B per point") == "working sets 4 KiB .. 1.875 GiB per point"
    assert readable_text("target (268435456 bytes, removed)") == "target (256 MiB, removed)"
    assert readable_text("worst thp: 1.638e+04 ns; 8.839e-05 ns") == "worst thp: 16,380 ns; 0.0001 ns"
    assert readable_text("64 B lines, randread_4k_qd16, v1e3x") == "64 B lines, randread_4k_qd16, v1e3x"


def test_no_formatter_ever_writes_scientific_notation():
    rng = random.Random(15)
    values = [rng.choice((-1, 1)) * 10 ** rng.uniform(-12, 18) for _ in range(3000)] + [0.0, 1e-300, 1e300]
    for value in values:
        texts = [format_number(value), format_time_ns(value), format_gb_s(value), format_iops(value),
                 format_bytes(int(abs(value)) if abs(value) < 1e18 else 1 << 60), format_count(value)]
        assert not any(SCIENTIFIC.search(text) for text in texts), (value, texts)
