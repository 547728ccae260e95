"""The inference on curves it was not written against: the nine published curves of real machines measured by
other tools (tests/fixtures/curves, true sizes in SOURCES.md) and a fixed-seed sample of synthetic curves from
known hierarchies (tests/inference_check.py; benchmarks/inference_accuracy.py scores thousands)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from fleetscope.ingest.curve_csv import read_curve
from fleetscope.analyze.inference import CurveReading, infer_cache_levels, infer_tlb
from inference_check import (Score, infer_synthetic, published_curves, random_curve, score, score_levels,
                                        widened)

CURVES = Path(__file__).resolve().parents[1] / "fixtures" / "curves"
PUBLISHED = {curve.name: curve for curve in published_curves(CURVES)}


def test_sources_md_gives_every_cache_curve_its_true_sizes():
    assert len(PUBLISHED) == 8
    assert PUBLISHED["intel_xeon_w3-2435_sapphirerapids_ramlat.csv"].true_sizes == [48 << 10, 2 << 20, 23592960]
    assert PUBLISHED["rpi4b_cortex-a72_ramlat.csv"].true_sizes == [32 << 10, 1 << 20]  # no L3


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_every_published_cache_curve_is_read_one_to_one(name):
    curve = PUBLISHED[name]
    inferred = infer_cache_levels(curve.sizes, curve.ns, reading=curve.reading)
    result = score_levels(inferred, curve.true_sizes)
    assert result.one_to_one, ([(level.level, level.onset_bytes, level.completion_bytes) for level in inferred.levels],
                               curve.true_sizes)


def test_tlb_reach_steps_are_attributed_to_the_tlb_not_taken_for_levels():
    def steps(name):
        curve = PUBLISHED[name]
        inferred = infer_cache_levels(curve.sizes, curve.ns, reading=curve.reading)
        return [(step.level, step.onset_entries, step.completion_entries) for step in inferred.tlb_steps]

    # 64 L1 DTLB entries x 4 KiB on Golden Cove; a 32-entry L1 DTLB and a 1024-entry L2 TLB on Cortex-A72
    assert steps("intel_xeon_w3-2435_sapphirerapids_ramlat.csv") == [("L2", 64, 128)]
    assert steps("rpi4b_cortex-a72_ramlat.csv") == [("L2", 32, 64), ("L3", 1024, 2048)]
    # Zen 4's L2 DTLB misses inside a 96 MiB L3 do not split it in two
    assert steps("amd_ryzen7_7800x3d_zen4_ramlat.csv") == [("L3", 4096, 8192)]


def test_a_level_the_sweep_passes_in_one_point_is_found_with_low_confidence():
    curve = PUBLISHED["intel_n100_gracemont_ramlat.csv"]  # 6 MiB L3: only the 4 MiB point is clean L3
    inferred = infer_cache_levels(curve.sizes, curve.ns, reading=curve.reading)
    l3 = inferred.levels[2]
    assert (l3.level, l3.plateau_first_bytes, l3.plateau_last_bytes, l3.confidence) == ("L3", 4 << 20, 4 << 20, "low")
    assert l3.latency_ns == pytest.approx(27.36)
    assert [level.confidence for level in inferred.levels] == ["high", "interval", "low", None]


def test_the_published_tlb_curve_gives_both_tlb_levels():
    # Cortex-A15: L1 DTLB 32 entries (reads), L2 TLB 512 (SOURCES.md); steps 33 -> 40 and 513 -> 520 pages
    curve = read_curve(CURVES / "tegra_k1_t124_cortex-a15_tlb_test.csv")
    inferred = infer_tlb(curve.sizes, curve.ns)
    pages = sorted(set(curve.sizes))
    for onset, completion, entries in ((inferred.l1_onset_pages, inferred.l1_completion_pages, 32),
                                       (inferred.l2_onset_pages, inferred.l2_completion_pages, 512)):
        low, high = widened(pages, onset, completion)
        assert low <= entries <= high, (onset, completion, entries)
    assert inferred.l1_miss_ns == pytest.approx(3.89 - 2.37, abs=0.15)


def test_a_synthetic_sample_is_read_within_one_sample_step():
    """Seeds 0-99 of the generator (over 3000 seeds: 97% of levels, 91% of curves one-to-one; inference
    version 2 read 88% and 63%). Thresholds a few points below this sample's 92 curves and 0.969, so that a
    change of the method that loses levels fails here."""
    scores = [score_levels(infer_synthetic(curve), curve.true_sizes) for curve in map(random_curve, range(100))]
    levels = sum(item.matched for item in scores) / sum(item.true_levels for item in scores)
    assert sum(item.one_to_one for item in scores) >= 85
    assert levels >= 0.94


def test_the_score_counts_missing_extra_and_out_of_step_levels():
    sizes = [2**exponent for exponent in range(12, 26)]   # 4 KiB .. 32 MiB, one point per octave
    true_sizes = [48 << 10, 2 << 20]
    assert score(sizes, [(32 << 10, 64 << 10), (1 << 20, 4 << 20)], true_sizes) == Score(2, 2, 0, True)
    # widened by one sample: [16 KiB, 32 KiB] reaches 64 KiB, [4 MiB, 8 MiB] reaches down to 2 MiB
    assert score(sizes, [(16 << 10, 32 << 10), (4 << 20, 8 << 20)], true_sizes).one_to_one
    assert score(sizes, [(4 << 10, 8 << 10), (1 << 20, 4 << 20)], true_sizes) == Score(2, 1, 1, False)
    assert score(sizes, [(32 << 10, 64 << 10), (256 << 10, 512 << 10), (1 << 20, 4 << 20)],
                 true_sizes) == Score(2, 2, 1, False)
    assert score(sizes, [(32 << 10, 64 << 10)], true_sizes) == Score(2, 1, 0, False)


def test_the_generator_knows_what_its_sweep_can_show():
    curves = [random_curve(seed) for seed in range(300)]
    assert random_curve(7).ns == random_curve(7).ns
    for curve in curves:
        assert all(size < curve.sizes[-1] for size in curve.true_sizes)
    truncated = [curve for curve in curves if curve.truncated]
    assert truncated and all(len(curve.true_sizes) < len(curve.hierarchy.caches) for curve in truncated)
    relative = [curve for curve in curves if curve.relative]
    assert relative and all(curve.ns[0] < curve.hierarchy.caches[0].latency_ns for curve in relative)  # L1 taken off


def ostep_tlb_curve(rng: random.Random, l1_entries: int, l2_entries: int, per_octave: int) -> tuple[list, list]:
    """ns per access as OSTEP's tlb.c measures it: loop overhead (3-8 ns) plus ~1 ns once past the L1 DTLB and a
    page walk past the L2 TLB, 0.5-3% noise both ways."""
    base, miss, walk = rng.uniform(3, 8), rng.uniform(0.8, 2.0), rng.uniform(5, 20)
    noise = rng.choice((0.005, 0.01, 0.02, 0.03))
    pages = sorted({round(2 ** (step / per_octave)) for step in range(13 * per_octave + 1)})
    ns = [(base + (miss if count > l1_entries else 0) + (walk if count > l2_entries else 0)) * math.exp(rng.gauss(0, noise))
          for count in pages]
    return pages, ns


def test_a_one_ns_l1_dtlb_step_is_not_merged_into_the_noise():
    rng = random.Random(3)
    pages = [1, 2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192]
    ns = [(5.0 + (1.0 if count > 64 else 0) + (10.0 if count > 1536 else 0)) * math.exp(rng.gauss(0, 0.03))
          for count in pages]
    inferred = infer_tlb(pages, ns)
    assert (inferred.l1_onset_pages, inferred.l1_completion_pages) == (64, 80)
    assert (inferred.l2_onset_pages, inferred.l2_completion_pages) == (1536, 2048)
    assert inferred.l1_miss_ns == pytest.approx(1.0, abs=0.3)


@pytest.mark.parametrize("per_octave", [2, 4])
def test_small_tlb_steps_on_noisy_sweeps_give_both_levels_within_a_step(per_octave):
    found = 0
    for seed in range(100):
        rng = random.Random(seed)
        l1_entries, l2_entries = rng.choice((32, 48, 64, 72, 96)), rng.choice((512, 1024, 1536, 2048))
        pages, ns = ostep_tlb_curve(rng, l1_entries, l2_entries, per_octave)
        inferred = infer_tlb(pages, ns)
        found += all(onset is not None and widened(pages, onset, completion)[0] <= entries <= widened(
            pages, onset, completion)[1] for onset, completion, entries in (
            (inferred.l1_onset_pages, inferred.l1_completion_pages, l1_entries),
            (inferred.l2_onset_pages, inferred.l2_completion_pages, l2_entries)))
    assert found >= 95


def test_a_relative_curve_finds_the_levels_of_the_absolute_one():
    curve = PUBLISHED["intel_xeon_w3-2435_sapphirerapids_ramlat.csv"]
    absolute = infer_cache_levels(curve.sizes, curve.ns, reading=curve.reading)
    first = curve.ns[0]
    relative = infer_cache_levels(curve.sizes, [value - first for value in curve.ns],
                                  reading=CurveReading("line-per-page", relative=True))
    assert [(level.onset_bytes, level.completion_bytes) for level in relative.levels] == [
        (level.onset_bytes, level.completion_bytes) for level in absolute.levels]
    assert relative.levels[0].latency_ns == pytest.approx(0, abs=0.01) and relative.relative
    assert relative.levels[2].latency_ns == pytest.approx(absolute.levels[2].latency_ns - first, rel=0.01)
