"""Adaptive sweeps: where to measure next so that each step of a latency or TLB curve is bracketed finely enough.

After a coarse pass, the latency sweep and the TLB sweep measure more points inside each rise, dividing in log
size where the curve leaves a plateau, until the size bracket of every step is at most the profile's target wide
(roles/kernels: `refine_octaves`, `tlb_refine_octaves`), within a budget of points (`refine_max_points`,
`tlb_refine_max_points`). The brackets are the inference's own (fleetscope.analyze.inference), so the points go
exactly where the warehouse will read the sizes: a cache level's onset or set-load capacity (whichever its physics
picks for the curve's pages: a guest's are 4 KiB whatever it asked), a TLB level's onset. Flat plateaus get no point.

Pure functions over (size, value) pairs; the Ansible filter `refine_points` (plugins/filter/sweep.py) feeds them
the kernels' JSON lines between rounds, benchmarks/sweep_accuracy.py a simulated machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fleetscope.analyze.inference import (LINE_BYTES, SIZE_ROUNDING_OCTAVES, CurveReading, InferenceError,
                                          infer_cache_levels, infer_tlb, per_size_minimum)

# Bracket widths are compared with a little slack: sizes rounded down to whole lines (or pages) make an exact
# division of a target-wide bracket come out a hair wider or narrower.
WIDTH_SLACK_OCTAVES = SIZE_ROUNDING_OCTAVES / 2


def rounds_needed(coarse_octaves: float, target_octaves: float) -> int:
    """Refinement rounds that take a bracket of one coarse step to the target: one that divides every bracket
    wider than the target into target-wide parts at once (a round's fixed cost, a process and the controller's
    tasks, is larger than most of its points'), plus one for a step whose bracket moved when points were added
    (a rise that turned out to start one coarse step earlier)."""
    if target_octaves <= 0:
        raise ValueError(f"target_octaves must be positive, not {target_octaves}")
    return (1 if coarse_octaves > target_octaves + WIDTH_SLACK_OCTAVES else 0) + 1


def _bisection(parts: int) -> list[tuple[int, int]]:
    """(depth, part) for the divisions 1 .. parts-1 of a bracket in bisection order: its middle first (depth 0),
    then the middles of the two halves (depth 1), and so on."""
    order: list[tuple[int, int]] = []
    spans, depth = [(0, parts)], 0
    while spans:
        halves = []
        for low, high in spans:
            if high - low >= 2:
                middle = (low + high) // 2
                order.append((depth, middle))
                halves += [(low, middle), (middle, high)]
        spans, depth = halves, depth + 1
    return order


def _divide(brackets: Sequence[tuple[int, int]], measured: set[int], target_octaves: float, unit: int,
            max_size: int | None = None) -> list[int]:
    """Every bracket wider than the target divided into equal parts in log size no wider than it: the sizes (in
    whole units) between the parts, once each, none past `max_size`, breadth first: every bracket's middle
    (closest level first), then every bracket's quarters, and so on. A budget that cannot divide every bracket
    to the target then narrows each as far as it can, rather than the first ones to the target and the last not
    at all (a guest's standard sweep spent its 14 points on its L1 and L2 brackets and left the L3's, an octave
    past a 2 MiB L2, unmeasured: that one point then read as a level and the L2 as 0.35x its size)."""
    ranked: list[tuple[int, int, int, int]] = []
    for order, (low, high) in enumerate(brackets):
        width = math.log2(high / low)
        if width <= target_octaves + WIDTH_SLACK_OCTAVES:
            continue
        parts = math.ceil(width / target_octaves - WIDTH_SLACK_OCTAVES / target_octaves)
        for depth, part in _bisection(parts):
            size = int(low * 2 ** (width * part / parts)) // unit * unit
            if low < size < high and size not in measured and (max_size is None or size <= max_size):
                ranked.append((depth, order, part, size))
    return list(dict.fromkeys(size for *_rank, size in sorted(ranked)))


def cache_refinement(sizes: Sequence[int], latency_ns: Sequence[float], *, target_octaves: float, budget: int,
                     reading: CurveReading = CurveReading(), max_bytes: int | None = None) -> list[int]:
    """Working-set sizes to measure next on a latency curve: every level's bracket (its onset or set-load
    bracket, as `reading`'s pages place its lines) still wider than `target_octaves` divided into target-wide
    parts, breadth first (every level's middle, closest level first, then their quarters...), at most `budget`
    sizes and none past `max_bytes` (the plan's price of a point;
    none where the curve gives no level to refine)."""
    if budget <= 0:
        return []
    try:
        curve = infer_cache_levels(sizes, latency_ns, reading=reading)
    except InferenceError:
        return []
    # the bracket each level's size is read from (its estimator, from the reading's placement)
    brackets = [level.onset if level.estimator == "onset" else level.set_load for level in curve.brackets]
    return _divide(brackets, set(curve.sizes), target_octaves, LINE_BYTES, max_bytes)[:budget]


def tlb_refinement(pages: Sequence[int], latency_ns: Sequence[float], *, target_octaves: float,
                   budget: int, control_ns: Sequence[float] | None = None) -> list[int]:
    """Page counts to measure next on a TLB curve: each TLB level's onset bracket (and a rise on the curve's last
    point alone) still wider than `target_octaves` divided into target-wide parts, breadth first (L1 first), at
    most `budget`. `control_ns`: the control chain's ns at those page counts (infer_tlb)."""
    if budget <= 0:
        return []
    try:
        inferred = infer_tlb(pages, latency_ns, control_ns=control_ns)
    except InferenceError:
        return []
    # a rise on the curve's last point alone reads no L2 TLB, but points inside it may show the step's onset
    brackets = [(low, high) for low, high in ((inferred.l1_low_pages, inferred.l1_high_pages),
                                              (inferred.l2_low_pages, inferred.l2_high_pages),
                                              inferred.last_point_rise_pages or (None, None)) if low is not None]
    return _divide(brackets, set(per_size_minimum(pages, latency_ns)[0]), target_octaves, 1)[:budget]
