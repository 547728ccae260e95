"""Adaptive sweeps: where to measure next so that each step of a latency or TLB curve is bracketed finely enough.

After a coarse pass, the latency sweep and the TLB sweep measure more points inside each rise, bisecting in log
size where the curve leaves a plateau, until the size bracket of every step is at most the profile's target wide
(roles/kernels: `refine_octaves`, `tlb_refine_octaves`), within a budget of points (`refine_max_points`,
`tlb_refine_max_points`). The brackets are the inference's own (fleetscope.analyze.inference), so the points go
exactly where the warehouse will read the sizes: a cache level's onset and half-step (whichever its physics
picks is then resolved; both are where the curve changes), a TLB level's onset. Flat plateaus get no point.

Pure functions over (size, value) pairs; the Ansible filter `refine_points` (plugins/filter/sweep.py) feeds them
the kernels' JSON lines between rounds, benchmarks/sweep_accuracy.py a simulated machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fleetscope.analyze.inference import (LINE_BYTES, SIZE_ROUNDING_OCTAVES, CurveReading, InferenceError,
                                          infer_cache_levels, infer_tlb, per_size_minimum)

# Bracket widths are compared with a little slack: sizes rounded down to whole lines (or pages) make an exact
# bisection of a target-wide bracket come out a hair wider or narrower.
WIDTH_SLACK_OCTAVES = SIZE_ROUNDING_OCTAVES / 2


def rounds_needed(coarse_octaves: float, target_octaves: float) -> int:
    """Bisection rounds that take a bracket of one coarse step to the target, plus one for a step whose bracket
    moved when points were added (a rise that turned out to start one coarse step earlier)."""
    if target_octaves <= 0:
        raise ValueError(f"target_octaves must be positive, not {target_octaves}")
    return max(0, math.ceil(math.log2(coarse_octaves / target_octaves) - 1e-9)) + 1


def _bisect(brackets: Sequence[tuple[int, int]], measured: set[int], target_octaves: float, unit: int) -> list[int]:
    """The log-midpoint (in whole units) of every bracket wider than the target, once each, in order."""
    chosen: list[int] = []
    for low, high in brackets:
        if math.log2(high / low) <= target_octaves + WIDTH_SLACK_OCTAVES:
            continue
        middle = int(math.sqrt(low * high)) // unit * unit
        if low < middle < high and middle not in measured and middle not in chosen:
            chosen.append(middle)
    return chosen


def cache_refinement(sizes: Sequence[int], latency_ns: Sequence[float], *, target_octaves: float, budget: int,
                     reading: CurveReading = CurveReading()) -> list[int]:
    """Working-set sizes to measure next on a latency curve: the middle of every level's onset and half-step
    bracket still wider than `target_octaves`, closest level first, at most `budget` of them (none where the
    curve gives no level to refine)."""
    if budget <= 0:
        return []
    try:
        curve = infer_cache_levels(sizes, latency_ns, reading=reading)
    except InferenceError:
        return []
    brackets = [bracket for level in curve.brackets for bracket in (level.onset, level.half_step)]
    return _bisect(brackets, set(curve.sizes), target_octaves, LINE_BYTES)[:budget]


def tlb_refinement(pages: Sequence[int], latency_ns: Sequence[float], *, target_octaves: float,
                   budget: int) -> list[int]:
    """Page counts to measure next on a TLB curve: the middle of each TLB level's onset bracket still wider
    than `target_octaves`, L1 first, at most `budget`."""
    if budget <= 0:
        return []
    try:
        inferred = infer_tlb(pages, latency_ns)
    except InferenceError:
        return []
    brackets = [(low, high) for low, high in ((inferred.l1_low_pages, inferred.l1_high_pages),
                                              (inferred.l2_low_pages, inferred.l2_high_pages)) if low is not None]
    return _bisect(brackets, set(per_size_minimum(pages, latency_ns)[0]), target_octaves, 1)[:budget]
