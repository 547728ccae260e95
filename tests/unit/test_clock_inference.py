"""The clock readings (fleetscope.analyze.clock) on synthetic curves with known answers: ramps that step or rise
exponentially from an idle clock, with noise, preempted slices and one slow slice after the ramp; turbo curves
that fall in bins, and flat ones as a VM gives. The dev VM's own curves are flat (no cpufreq, no turbo visible to
the guest), so the method's logic is tested here, not on this machine's numbers."""

from __future__ import annotations

import math
import random

import pytest

from fleetscope.analyze.clock import (FLAT_TOLERANCE, RAMP_MIN_SHARE, RAMP_MIN_SLICES, infer_ramp,
                                      infer_turbo)

SLICE_US = 200.0


def slices(count: int, clock, noise: float = 0.01, seed: int = 1, slice_us: float = SLICE_US):
    """(end µs, GHz, share) of `count` slices whose true clock is clock(t_ms) at each slice's middle."""
    rng = random.Random(seed)
    ends = [slice_us * (index + 1) for index in range(count)]
    ghz = [clock((end - slice_us / 2) / 1000) * (1 + rng.gauss(0, noise)) for end in ends]
    return ends, ghz, [1.0] * count


@pytest.mark.parametrize("step_ms", [0.6, 5.0, 15.0, 40.0])
def test_a_step_from_idle_is_found_where_it_happened(step_ms):
    ends, ghz, shares = slices(500, lambda t: 1.2 if t < step_ms else 3.5)
    reading = infer_ramp(ends, ghz, shares)
    assert reading.ramp_ms == pytest.approx(step_ms, abs=SLICE_US / 1000)
    assert reading.top_ghz == pytest.approx(3.5, rel=0.01) and reading.idle_ghz == pytest.approx(1.2, rel=0.05)
    assert reading.flat is False and f"{reading.ramp_ms:.3g} ms" in reading.note


@pytest.mark.parametrize("tau_ms", [1.0, 4.0, 12.0])
def test_an_exponential_rise_ends_where_it_reaches_95_percent(tau_ms):
    """A governor that raises the clock gradually: 95% of the top at tau x ln((top - idle) / (0.05 top))."""
    idle, top = 0.8, 4.2
    ends, ghz, shares = slices(1000, lambda t: top - (top - idle) * math.exp(-t / tau_ms), noise=0.005, seed=3)
    expected = tau_ms * math.log((top - idle) / (0.05 * top))
    assert infer_ramp(ends, ghz, shares).ramp_ms == pytest.approx(expected, abs=2 * SLICE_US / 1000)


def test_a_flat_clock_says_so_and_gives_no_ramp():
    """This VM: the first slice is already at the top clock."""
    ends, ghz, shares = slices(500, lambda t: 3.55, noise=0.01)
    reading = infer_ramp(ends, ghz, shares)
    assert reading.ramp_ms == 0.0 and reading.flat is True and reading.note.startswith("flat")


def test_one_slow_slice_after_the_ramp_does_not_move_it():
    ends, ghz, shares = slices(500, lambda t: 1.0 if t < 10 else 3.0, noise=0.0)
    ghz[300] = 2.0  # an interrupt took a third of one slice, 60 ms after the ramp ended
    assert infer_ramp(ends, ghz, shares).ramp_ms == pytest.approx(10.0, abs=SLICE_US / 1000)


def test_slices_the_thread_barely_ran_are_left_out_and_counted():
    ends, ghz, shares = slices(500, lambda t: 1.0 if t < 8 else 3.0, noise=0.0)
    for index in range(60, 80):  # preempted: a low share and a meaningless clock
        shares[index], ghz[index] = 0.05, 0.3
    reading = infer_ramp(ends, ghz, shares)
    assert reading.slices_left_out == 20 and reading.ramp_ms == pytest.approx(8.0, abs=SLICE_US / 1000)


def test_a_machine_too_busy_to_read_a_ramp_says_so():
    ends, ghz, _ = slices(50, lambda t: 3.0)
    shares = [RAMP_MIN_SHARE / 2] * 45 + [1.0] * 5
    reading = infer_ramp(ends, ghz, shares)
    assert reading.ramp_ms is None and f"at least {RAMP_MIN_SLICES} are needed" in reading.note


def test_a_ramp_still_rising_at_the_end_is_not_given_a_time():
    ends, ghz, shares = slices(100, lambda t: 1.0 + 0.2 * t, noise=0.0)  # rising for the whole 20 ms
    reading = infer_ramp(ends, ghz, shares)
    assert reading.ramp_ms is None and "still below its top" in reading.note


def test_a_turbo_curve_falls_in_bins():
    """An 8-core part: 5.0 GHz on one core, 4.2 GHz on all (Intel's turbo ratio limits by active cores)."""
    reading = infer_turbo([1, 2, 4, 8], [5.0, 4.9, 4.6, 4.2])
    assert (reading.one_core_ghz, reading.all_cores_ghz, reading.max_active_cores) == (5.0, 4.2, 8)
    assert reading.drop == pytest.approx(0.16) and reading.flat is False
    assert reading.steps == "4 cores: 4.6 GHz; 8 cores: 4.2 GHz"  # 4.9 is within the tolerance of 5.0


@pytest.mark.parametrize("seed", range(5))
def test_a_vm_s_noisy_flat_curve_is_flat(seed):
    rng = random.Random(seed)
    cores = [1, 2, 4, 8, 16]
    reading = infer_turbo(cores, [3.5 * (1 + rng.uniform(-FLAT_TOLERANCE / 2, FLAT_TOLERANCE / 2)) for _ in cores])
    assert reading.flat is True and reading.steps is None and reading.note.startswith("flat")


def test_a_curve_without_a_one_core_point_has_no_reference():
    reading = infer_turbo([2, 4], [3.0, 2.9])
    assert reading.one_core_ghz is None and reading.drop is None and "no one-core point" in reading.note
    assert infer_turbo([], []).note == "no clock was measured for this class"
