"""fleetscope.analyze.inference on synthetic curves with known answers: cache levels from step curves with noise
(jitter, spikes, a non-monotone dip), no spurious level on a flat curve, TLB steps, MLP saturation,
loaded-latency figures, and the pieces waiting for the bandwidth kernels."""

from __future__ import annotations

import math
import random

import pytest

from fleetscope.analyze.inference import (amat_fit, bandwidth_per_level, infer_cache_levels, infer_loaded_latency, infer_mlp,
                                  infer_tlb, isotonic_fit, kneedle_index, lower_envelope)
from fleetscope.analyze.refine import tlb_refinement

SEEDS = range(40)


def smoothstep_latency(size: float, levels: list[tuple[float, float | None]], rise_octaves: float) -> float:
    """A cache curve: each level's latency up to its capacity, then a rise to the next level over
    `rise_octaves` (0: a sharp step, as LRU gives a cyclic chase)."""
    latency = levels[0][0]
    for (lower, capacity), (upper, _) in zip(levels, levels[1:]):
        share = math.log2(size / capacity) / rise_octaves if rise_octaves else float(size > capacity)
        share = min(max(share, 0.0), 1.0)
        latency += (upper - lower) * share * share * (3 - 2 * share)
    return latency


def random_hierarchy(rng: random.Random) -> list[tuple[float, float | None]]:
    """Three cache levels (capacities anywhere, not on sweep points) and memory, 3-6 octaves apart."""
    l1 = rng.uniform(24 * 1024, 64 * 1024)
    l2 = l1 * 2 ** rng.uniform(3, 6)
    l3 = l2 * 2 ** rng.uniform(3, 5)
    return [(rng.uniform(1.0, 1.5), l1), (rng.uniform(3.5, 5.0), l2), (rng.uniform(12, 40), l3),
            (rng.uniform(80, 160), None)]


def sweep(per_octave: int, largest: float) -> list[int]:
    """Sizes as the chase kernel sweeps them: 4 KiB up, per_octave points per doubling, whole lines."""
    top = math.log2(largest)
    return sorted({round(2 ** (12 + step / per_octave) / 64) * 64 for step in range(int((top - 12) * per_octave) + 1)})


def noisy_curve(seed: int, per_octave: int, spikes: bool):
    rng = random.Random(seed)
    levels = random_hierarchy(rng)
    sizes = sweep(per_octave, levels[2][1] * 8)
    rise = rng.uniform(0, 0.2)
    latency = [smoothstep_latency(size, levels, rise) * (1 + abs(rng.gauss(0, 0.02))) for size in sizes]
    if spikes:
        # Two spikes and a 15-25% dip, on plateaus (an octave and a step away from every capacity), apart,
        # not on the first or last size (a lone point at either end cannot be told from a step).
        inside = [index for index, size in enumerate(sizes[:-1])
                  if index and all(abs(math.log2(size / capacity)) > 1 + 1.01 / per_octave for _, capacity in levels[:3])]
        while True:
            picks = sorted(rng.sample(inside, 3))
            if all(b - a >= 2 for a, b in zip(picks, picks[1:])):
                break
        spike_one, spike_two, dip = rng.sample(picks, 3)
        latency[spike_one] *= rng.uniform(1.5, 3)
        latency[spike_two] *= rng.uniform(1.5, 3)
        latency[dip] *= rng.uniform(0.75, 0.85)
    return levels, sizes, latency


def assert_recovered(levels, sizes, latency, per_octave, latency_tolerance=0.10):
    sysfs = [round(capacity) for _, capacity in levels[:3]]
    inferred = infer_cache_levels(sizes, latency, sysfs_sizes=sysfs)
    names = [level.level for level in inferred.levels]
    assert names == ["L1", "L2", "L3", "DRAM"], (names, levels)
    step = 1 / per_octave
    for level, (latency_ns, capacity) in zip(inferred.levels, levels):
        if capacity is None:
            assert level.capacity_bytes is None and "memory" in level.note
            continue
        # the size bracket is two neighbouring sweep sizes around the onset: its middle is within a step; the
        # best estimate is the stated size where the bracket holds it, and otherwise within a step too
        middle = math.sqrt(level.size_low_bytes * level.size_high_bytes)
        assert abs(math.log2(middle / capacity)) <= step + 0.01, (level, capacity)
        assert level.capacity_bytes is None or abs(math.log2(level.capacity_bytes / capacity)) <= step + 0.01
        if level.size_low_bytes <= capacity <= level.size_high_bytes:
            assert (level.capacity_bytes, level.size_method) == (round(capacity), "sysfs")
        assert level.onset_bytes <= capacity * 2**step and level.completion_bytes >= capacity / 2**step
        assert level.latency_ns == pytest.approx(latency_ns, rel=latency_tolerance)
    assert [level.sysfs_size_bytes for level in inferred.levels] == [*sysfs, None]


@pytest.mark.parametrize("per_octave", [1, 2, 4])
def test_clean_step_curves_give_every_capacity_within_one_sweep_step(per_octave):
    for seed in SEEDS:
        levels, sizes, latency = noisy_curve(seed, per_octave, spikes=False)
        assert_recovered(levels, sizes, latency, per_octave)


@pytest.mark.parametrize("per_octave", [2, 4])
def test_spikes_and_a_dip_do_not_move_a_capacity_by_more_than_a_step(per_octave):
    for seed in SEEDS:
        levels, sizes, latency = noisy_curve(seed, per_octave, spikes=True)
        # a dip left on a plateau pulls the level's latency down by up to its depth
        assert_recovered(levels, sizes, latency, per_octave, latency_tolerance=0.25)


def test_a_dip_in_the_last_level_is_set_aside_not_taken_for_a_level():
    levels = [(1.2, 32768), (4.0, 1 << 20), (15.0, 8 << 20), (130.0, None)]
    sizes = sweep(2, 256 << 20)
    latency = [smoothstep_latency(size, levels, 0.1) for size in sizes]
    dip = sizes.index(64 << 20)
    latency[dip] *= 0.7
    inferred = infer_cache_levels(sizes, latency)
    assert [level.level for level in inferred.levels] == ["L1", "L2", "L3", "L4"]
    assert inferred.set_aside_bytes == [64 << 20]
    assert inferred.levels[-1].latency_ns == pytest.approx(130.0)
    assert "memory if the sweep went past every cache" in inferred.levels[-1].note


def test_a_flat_curve_is_one_level_whatever_the_noise():
    for seed in SEEDS:
        rng = random.Random(seed)
        sizes = sweep(rng.choice([1, 2, 4]), 256 << 20)
        latency = [1.3 * (1 + abs(rng.gauss(0, 0.03))) for _ in sizes]
        for index in rng.sample(range(len(sizes) - 1), 2):
            latency[index] *= rng.uniform(1.5, 3)
        inferred = infer_cache_levels(sizes, latency, sysfs_sizes=[32768])
        assert len(inferred.levels) == 1, inferred.levels
        level = inferred.levels[0]
        assert level.capacity_bytes is None and "the sweep ends on this plateau" in level.note


def test_a_drifting_plateau_and_a_slow_rise_are_not_split_into_levels():
    # 4 KiB pages: latency creeps up 8% per octave inside a level, then a 3x step
    sizes = sweep(4, 16 << 20)
    latency = [(1.0 if size <= 1 << 20 else 3.0) * 1.08 ** math.log2(size / 4096) for size in sizes]
    inferred = infer_cache_levels(sizes, latency)
    assert len(inferred.levels) == 2
    assert abs(math.log2(inferred.levels[0].capacity_bytes / (1 << 20))) <= 0.25


def test_latency_in_cycles_uses_the_fastest_clock_reading_of_the_plateau():
    sizes = [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288]
    latency = [1.25] * 4 + [4.0] * 4
    clocks = [3.2, 2.0, 3.2, 3.2, 3.0, 3.0, None, 3.0]
    inferred = infer_cache_levels(sizes, latency, core_clock_ghz=clocks)
    assert [level.latency_cycles for level in inferred.levels] == [pytest.approx(4.0), pytest.approx(12.0)]
    no_clock = infer_cache_levels(sizes, latency)
    assert no_clock.levels[0].latency_cycles is None


def test_a_curve_that_cannot_be_inferred_says_why():
    from fleetscope.analyze.inference import InferenceError

    with pytest.raises(InferenceError, match="at least two sizes"):
        infer_cache_levels([4096, 4096], [1.0, 1.1])
    with pytest.raises(InferenceError, match="positive"):
        infer_cache_levels([4096, 8192], [1.0, -1.0])
    rising = infer_cache_levels([4096 * 2**step for step in range(8)], [1.5**step for step in range(8)])
    assert rising.levels == [] and "no plateau" in rising.notes[0]


def test_fits_are_monotone_and_keep_what_is_already_monotone():
    values = [3.0, 1.0, 2.0, 5.0, 4.0, 6.0]
    assert lower_envelope(values) == [1.0, 1.0, 2.0, 4.0, 4.0, 6.0]
    assert isotonic_fit(values) == [2.0, 2.0, 2.0, 4.5, 4.5, 6.0]
    assert isotonic_fit([1.0, 2.0, 3.0]) == [1.0, 2.0, 3.0]


def tlb_curve(rng: random.Random, pages: list[int], l1_entries: int, l2_entries: int) -> list[float]:
    """ns an L1-resident chain sees: 1.25 within the L1 TLB, +2.2 past it, +20 past the L2 TLB, growing
    slowly beyond as page tables spill out of the caches; paired-difference noise both ways."""
    latency = []
    for count in pages:
        cost = 0.0 if count <= l1_entries else 2.2 if count <= l2_entries else 20 * (count / l2_entries) ** 0.3
        latency.append(1.25 + cost + rng.gauss(0, 0.08))
    return latency


@pytest.mark.parametrize("per_octave", [1, 2, 4])
def test_tlb_entries_and_walk_cost_from_a_noisy_sweep(per_octave):
    for seed in SEEDS:
        rng = random.Random(seed)
        pages = sorted({round(8 * 2 ** (step / per_octave)) for step in range(12 * per_octave + 1)})
        inferred = infer_tlb(pages, tlb_curve(rng, pages, 72, 3072))
        step = 1 / per_octave
        for low, high, entries, truth in ((inferred.l1_low_pages, inferred.l1_high_pages, inferred.l1_entries, 72),
                                          (inferred.l2_low_pages, inferred.l2_high_pages, inferred.l2_entries, 3072)):
            assert abs(math.log2(math.sqrt(low * high) / truth)) <= step + 0.01, inferred
            # a count only where the bracket is narrow enough for one (four points per octave)
            assert (entries is not None) == (per_octave == 4), inferred
        assert inferred.l1_miss_ns == pytest.approx(2.2, abs=0.3)
        assert 18 <= inferred.walk_ns <= 30


def test_a_tlb_sweep_that_never_leaves_the_l1_tlb_says_so():
    pages = [8, 16, 32, 64]
    inferred = infer_tlb(pages, [1.25, 1.26, 1.25, 1.27])
    assert inferred.l1_entries is None and inferred.l2_entries is None
    assert "stays in the L1 TLB" in inferred.note


def test_a_second_step_on_the_last_point_alone_reads_no_l2_tlb():
    """Method 15: an Emerald Rapids guest's quick 4 KiB curve (paired TLB - control ns over the control's 1.7 ns
    L1 hit), cut to 512 pages by the budget, rose 1 ns on its last point; its STLB has 2,048 entries, and method 14
    read "L2 TLB 256-512". The L1 step (96 entries) still reads; one more point on the walk's plateau past the step
    gives the L2 bracket back."""
    pages = [8, 16, 32, 64, 76, 90, 107, 128, 256, 512]
    paired = [-0.03, 0.04, 0.01, 0.00, 0.01, 0.06, 1.17, 2.76, 2.67, 3.65]
    inferred = infer_tlb(pages, [1.7 + value for value in paired])
    assert (inferred.l1_low_pages, inferred.l1_high_pages) == (90, 107)
    assert inferred.l1_miss_ns == pytest.approx(2.7, abs=0.2)
    assert inferred.l2_low_pages is None and inferred.l2_entries is None and inferred.walk_ns is None
    assert "at its last point (512 pages) alone" in inferred.note
    # a refinement round still looks inside that rise for the step's onset
    assert inferred.last_point_rise_pages == (256, 512)
    assert all(256 < count < 512 for count in tlb_refinement(pages, [1.7 + value for value in paired],
                                                             target_octaves=0.25, budget=6)[-3:])
    # the same shape with the step seen levelling off: an L2 bracket again
    rng = random.Random(7)
    pages = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    shown = infer_tlb(pages, tlb_curve(rng, pages, 72, 1536))
    assert (shown.l2_low_pages, shown.l2_high_pages) == (1024, 2048), shown
    cut = infer_tlb(pages[:-2], tlb_curve(random.Random(7), pages[:-2], 72, 768)[:-1] + [23.0])
    assert cut.l2_low_pages is None and "no L2 TLB is read" in cut.note, cut


# A Zen 4 guest (EPYC family 25 model 17, L1d 32 KiB, L1 DTLB 72, L2 DTLB 3,072) measured with the tlb kernel,
# 4 KiB pages, CPU 0: page counts, the paired TLB - control difference (median ns) and the control chain's minimum.
ZEN4_GUEST_TLB = [(8, -0.008, 1.094), (16, -0.003, 1.089), (32, 0.003, 1.090), (64, 0.008, 1.092),
                  (76, 1.959, 1.092), (90, 1.918, 1.090), (107, 1.973, 1.093), (128, 1.916, 1.092),
                  (256, 1.947, 1.092), (512, 1.891, 1.164), (608, 2.258, 3.931), (724, 2.292, 3.861),
                  (861, 2.245, 3.873), (1024, 2.244, 3.841)]


def test_a_step_where_the_control_chain_leaves_the_l1d_reads_no_l2_tlb():
    """Method 17: one line per page outgrows the 32 KiB L1d at 512 pages, as the control's packed lines do, and
    the difference steps 0.35 ns there and levels off: no TLB's reach (this guest's L2 DTLB has 3,072 entries,
    beyond the curve). Without the control's curve it reads as the L2 TLB, as method 16 did (558 entries)."""
    pages = [count for count, _paired, _control in ZEN4_GUEST_TLB]
    latency = [1.09 + paired for _count, paired, _control in ZEN4_GUEST_TLB]
    control = [value for _count, _paired, value in ZEN4_GUEST_TLB]
    blind = infer_tlb(pages, latency)
    assert (blind.l2_low_pages, blind.l2_high_pages) == (512, 608), blind
    inferred = infer_tlb(pages, latency, control_ns=control)
    assert (inferred.l1_low_pages, inferred.l1_high_pages) == (64, 76)
    assert inferred.l2_low_pages is None and inferred.l2_entries is None and inferred.walk_ns is None
    assert "where the control chain leaves a data cache (512 to 608 lines)" in inferred.note
    # and the refinement spends no point inside that step
    assert all(not 512 < count < 608 for count in tlb_refinement(pages, latency, target_octaves=0.125, budget=6,
                                                                   control_ns=control))


def test_past_a_data_cache_step_the_l2_tlb_is_read_from_the_next_step():
    """The same curve swept on to the L2 TLB (synthetic: the step at the L1d 0.8 ns, as an Emerald Rapids guest's
    rose 1 ns, and a 3,072-entry L2 TLB whose misses add a 13 ns walk): the step at the L1d is passed over and the
    L2 TLB read from the step after it, whatever the noise; without the control's curve it is read at the L1d."""
    for seed in SEEDS:
        rng = random.Random(seed)
        pages = [8, 16, 32, 64, 76, 90, 128, 256, 512, 608, 724, 1024, 1448, 2048, 2435, 2896, 3444, 4096, 5793, 8192]
        latency = [1.09 + (0 if count <= 72 else 1.9) + (0.8 if count > 512 else 0) + (13 if count > 3072 else 0)
                   + rng.gauss(0, 0.03) for count in pages]
        control = [1.09 if count <= 512 else 3.87 for count in pages]
        assert (infer_tlb(pages, latency).l2_low_pages, infer_tlb(pages, latency).l2_high_pages) == (512, 608)
        inferred = infer_tlb(pages, latency, control_ns=control)
        assert (inferred.l2_low_pages, inferred.l2_high_pages) == (2896, 3444), inferred
        assert inferred.walk_ns == pytest.approx(15.7, abs=0.5)
        assert "where the control chain leaves a data cache" in inferred.note


def test_mlp_saturation_is_the_first_k_near_the_largest_mlp():
    chains = list(range(1, 17))
    mlp = [min(k, 10) * (1 + 0.01 * (k % 3)) for k in chains]
    result = infer_mlp(chains, mlp)
    # the largest MLP is 10.2 (k = 11): the first k at 90% of it (9.18) is k = 10
    assert result.saturation_chains == 10 and result.max_mlp_chains == 11
    still_growing = infer_mlp([1, 2, 4], [1.0, 2.0, 3.9])
    assert still_growing.saturation_chains == 4 and "still grows" in still_growing.note
    assert infer_mlp([1], [1.0]).saturation_chains is None


def test_loaded_latency_figures_on_an_mlc_ladder():
    # csit_skx_loaded_latency.txt (tests/fixtures/mlc_samples): delay, ns, MB/s
    ladder = [(0, 282.66, 215712.8), (2, 282.14, 215757.4), (8, 280.21, 215868.1), (15, 279.20, 216313.2),
              (50, 275.25, 216643.0), (100, 227.05, 215075.0), (200, 121.92, 160242.9), (300, 101.21, 111587.4),
              (400, 95.48, 85019.7), (500, 94.46, 68717.3), (700, 92.27, 49742.2), (1000, 91.03, 35264.8),
              (1300, 90.11, 27396.3), (1700, 89.34, 21178.7), (2500, 90.15, 14672.8), (3500, 89.00, 10715.7),
              (5000, 82.00, 7788.2), (9000, 81.46, 4684.0), (20000, 81.40, 2541.9)]
    result = infer_loaded_latency([mb_s / 1000 for _, _, mb_s in ladder], [ns for _, ns, _ in ladder])
    assert result.points == 19
    assert result.idle_latency_ns == 81.40 and result.idle_source == "lightest load"
    assert result.peak_bandwidth_gb_s == pytest.approx(216.643)
    assert result.knee_bandwidth_gb_s == pytest.approx(160.2429) and result.knee_latency_ns == 121.92
    # the knee lies between the ladder points either side of Kneedle's: 111.6 GB/s (101 ns) and 215.1 GB/s (227 ns)
    assert (result.knee_low_gb_s, result.knee_high_gb_s) == (pytest.approx(111.5874), pytest.approx(215.075))
    assert result.saturated_latency_ns == pytest.approx(279.705)  # the six points within 10% of 216.6 GB/s
    # latency passes 2 x 81.4 = 162.8 ns between 121.92 ns (160.2 GB/s) and 227.05 ns (215.1 GB/s)
    assert 160.2 < result.doubling_bandwidth_gb_s < 215.1
    assert result.knee_outstanding_lines == pytest.approx(160.2429e9 / 64 * 121.92e-9)


def test_loaded_latency_with_too_few_pairs_or_no_doubling_says_why():
    assert "need three" in infer_loaded_latency([1.0, 2.0], [80.0, 90.0]).note
    flat = infer_loaded_latency([1.0, 5.0, 10.0, 20.0], [80.0, 81.0, 85.0, 100.0])
    assert flat.doubling_bandwidth_gb_s is None and "never doubles" in flat.note
    assert kneedle_index([1.0, 1.0], [2.0, 3.0]) is None


def test_a_curve_whose_latency_never_rises_has_no_knee():
    # The host: latency stays at or under idle up to the peak (a 2-vCPU guest with one load thread);
    # Kneedle alone named '2 GB/s at 165 ns (idle 173 ns)' on it
    bandwidth = [0.9, 2.0, 4.1, 8.3, 16.0, 27.4]
    latency = [171.0, 165.0, 168.0, 170.0, 172.0, 176.0]
    flat = infer_loaded_latency(bandwidth, latency, idle_ns=173.0)
    assert flat.knee_bandwidth_gb_s is None and flat.knee_low_gb_s is None and flat.knee_outstanding_lines is None
    assert flat.idle_latency_ns == 173.0 and flat.idle_source == "no-load point" and flat.saturated_latency_ns == 176.0
    assert ("no knee: latency at saturation (within 10% of the peak bandwidth) is 1.02 x idle (176 ns vs 173 ns, "
            "no-load point); a knee needs 1.3 x") in flat.note
    # one slow point at light load is no rise: the saturated end decides
    spiked = infer_loaded_latency([*bandwidth, 0.5], [*latency, 400.0], idle_ns=173.0)
    assert spiked.knee_bandwidth_gb_s is None and spiked.saturated_latency_ns == 176.0
    assert flat.peak_bandwidth_gb_s == 27.4


def test_a_curve_that_rises_without_a_bend_is_not_said_to_rise_too_little():
    """This dev VM's read curve (2026-11-30): its points sit at light load, then one at 29.7 GB/s and 216 ns, 1.41 x
    its 154 ns idle. Kneedle finds no point below the chord, so no knee; the host page said 'latency at saturation
    is 1.41 x idle ...; a knee needs 1.3 x', a reason that did not hold."""
    from dataclasses import asdict

    from fleetscope.report.sections.bandwidth import knee_figure

    curve = infer_loaded_latency([0.05, 0.1, 0.3, 1.0, 29.7], [151.0, 158.0, 153.0, 155.0, 216.0], idle_ns=154.0)
    assert curve.knee_bandwidth_gb_s is None and "the curve does not bend" in curve.note
    row = {**asdict(curve), "source": "loaded_latency", "traffic": "read", "path": None, "run_index": 0}
    text = knee_figure([row]).text
    assert text.startswith("none: latency at saturation is 1.40 × idle (216 ns vs 154 ns at no load, peak 29.7 GB/s, "
                           "read traffic), but the curve does not bend"), text
    assert "a knee needs" not in text
    flat = infer_loaded_latency([0.9, 2.0, 4.1, 8.3, 16.0, 27.4], [171.0, 165.0, 168.0, 170.0, 172.0, 176.0],
                                idle_ns=173.0)
    flat_row = {**asdict(flat), "source": "loaded_latency", "traffic": "read", "path": None, "run_index": 0}
    assert knee_figure([flat_row]).text.endswith("a knee needs 1.3 ×")


@pytest.mark.parametrize("seed", SEEDS)
def test_the_knee_interval_holds_the_corner_of_synthetic_queueing_curves(seed):
    """A ladder over a curve flat at idle up to a corner bandwidth, then rising linearly (a hockey stick), with ±1%
    noise and a random ladder: the knee interval holds the corner; the same ladder over a flat curve has none."""
    rng = random.Random(seed)
    idle, peak = rng.uniform(60, 200), rng.uniform(10, 300)
    corner = peak * rng.uniform(0.4, 0.7)
    rise = rng.uniform(1.6, 5.0)  # latency at the peak over idle (at 90% of the peak: 1.4x or more)

    def latency(bw: float) -> float:
        past = max(bw - corner, 0.0) / (peak - corner)
        return idle * (1 + (rise - 1) * past)

    fractions = sorted({rng.uniform(0.02, 0.999) for _ in range(rng.randint(8, 20))} | {1.0})
    bandwidth = [peak * fraction for fraction in fractions]
    noisy = [latency(bw) * rng.uniform(0.99, 1.01) for bw in bandwidth]
    result = infer_loaded_latency(bandwidth, noisy, idle_ns=idle)
    assert result.knee_low_gb_s <= corner * 1.05 and result.knee_high_gb_s >= corner * 0.95, (corner, result)
    assert result.knee_low_gb_s <= result.knee_bandwidth_gb_s <= result.knee_high_gb_s
    flat = infer_loaded_latency(bandwidth, [idle * rng.uniform(0.95, 1.2) for _ in bandwidth], idle_ns=idle)
    assert flat.knee_bandwidth_gb_s is None and "no knee" in flat.note


def test_bandwidth_per_level_and_amat_take_plain_arrays():
    levels = infer_cache_levels(sweep(1, 64 << 20), [smoothstep_latency(size, [(1.2, 32768), (4.0, 1 << 20), (100.0, None)],
                                                                        0) for size in sweep(1, 64 << 20)]).levels
    sizes = [16384, 32768, 262144, 64 << 20]
    per_level = bandwidth_per_level(levels, sizes, [200.0, 190.0, 90.0, 20.0])
    assert [(item.level, item.bandwidth_gb_s) for item in per_level] == [("L1", 195.0), ("L2", 90.0), ("L3", 20.0)]
    fit = amat_fit([0.0, 0.1, 0.2, 0.4], [1.0, 11.0, 21.0, 41.0])
    assert fit.hit_ns == pytest.approx(1.0) and fit.miss_penalty_ns == pytest.approx(100.0)
    assert fit.r_squared == pytest.approx(1.0)
    assert amat_fit([0.1, 0.1, 0.1], [1.0, 2.0, 3.0]).note.startswith("every point has the same miss rate")


def test_a_rise_after_memory_is_not_a_capacity():
    # a 4 KiB-page sweep past the L2 TLB's reach: memory's plateau, then page walks climb to the sweep's end
    sizes = sweep(1, 2 << 30)
    latency = [smoothstep_latency(size, [(1.2, 32768), (4.0, 1 << 20), (15.0, 16 << 20), (120.0, None)], 0.1)
               * (1.9 if size == sizes[-1] else 1) for size in sizes]
    dram = infer_cache_levels(sizes, latency, sysfs_sizes=[32768, 1 << 20, 16 << 20]).levels[-1]
    assert (dram.level, dram.capacity_bytes, dram.onset_bytes, dram.confidence) == ("DRAM", None, None, None)
    assert "memory: the curve still rises after it" in dram.note
