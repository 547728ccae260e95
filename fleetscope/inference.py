"""Infer a host's memory hierarchy from its measured curves (METHODS.md, "Inferring the hierarchy from a curve").

Pure functions over plain sequences, so the warehouse (fleetscope.derive), `fleetscope infer --csv` and the
notebooks share one method. What cannot be inferred is None with a note saying why, never a guess.

The method, for a latency-vs-working-set curve:
1. per size, the robust minimum (the caller's per-point minimum; several rows of one size: their minimum);
2. a non-decreasing fit of ln(latency) over log2(size). Timing noise on an idle machine only ever adds
   time, so cache curves use the lower monotone envelope (each point lowered to the smallest value at
   or after it): a spike, or a whole point measured slow, is ignored. A difference of two chains (TLB) is
   noisy both ways and gets the least-squares isotonic fit (pool adjacent violators) instead;
3. plateaus: runs where the fit grows less than FLAT_SLOPE per octave, at least MIN_PLATEAU_OCTAVES long
   with at least two measured points on it (within SUPPORT_RATIO of the fit); two plateaus with less
   than MIN_STEP_RATIO between them are one level. A flat run held down by one low point is either a
   dip (the point is set aside, reported, and the curve fitted again) or a slow point the envelope
   pulled down into a rise (no level): see _supported_fit;
4. each level's latency is the fit's median over its plateau; its capacity is the log-midpoint of the
   rise after it, [onset, completion] = the last size of the plateau and the first size of the next,
   each moved into the rise past sizes whose fit is within SUPPORT_RATIO of the level.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

# Version of the method below; stored with every inferred row so a change can be recomputed.
INFERENCE_VERSION = 2  # 2: bandwidth per level, SAXPY fit, the loaded_latency kernel's curves

FLAT_SLOPE = 0.15              # ln(latency) per octave: flatter than this is a plateau (16% per octave)
MIN_PLATEAU_OCTAVES = 0.5      # a plateau spans at least half an octave
SIZE_ROUNDING_OCTAVES = 0.05   # swept sizes are rounded to whole lines: 2^15.5 B is 46336, not 46341
MIN_STEP_RATIO = 1.25          # the smallest latency step between two levels; closer plateaus are one level
SUPPORT_RATIO = 1.10           # a measured point lies on its plateau when within 10% of the fit
STEEP_FRACTION = 0.5           # a rise that never levels off: its pairs at least half as steep as the steepest
SATURATION_FRACTION = 0.9      # MLP saturates at the first k reaching 90% of the largest MLP(k)
LINE_BYTES = 64


class InferenceError(ValueError):
    """The input cannot be inferred from (too few points, non-positive values ...); the message says why."""


# ---- fits ------------------------------------------------------------------------------------------

def lower_envelope(values: Sequence[float]) -> list[float]:
    """The largest non-decreasing sequence below `values`: each value lowered to the smallest at or after it."""
    fitted = list(values)
    for index in range(len(fitted) - 2, -1, -1):
        fitted[index] = min(fitted[index], fitted[index + 1])
    return fitted


def isotonic_fit(values: Sequence[float], weights: Sequence[float] | None = None) -> list[float]:
    """The least-squares non-decreasing fit (pool adjacent violators)."""
    weights = [1.0] * len(values) if weights is None else list(weights)
    blocks: list[list[float]] = []  # [mean, weight, count]
    for value, weight in zip(values, weights):
        blocks.append([value, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            mean2, weight2, count2 = blocks.pop()
            mean1, weight1, count1 = blocks.pop()
            total = weight1 + weight2
            blocks.append([(mean1 * weight1 + mean2 * weight2) / total, total, count1 + count2])
    fitted = []
    for mean, _, count in blocks:
        fitted.extend([mean] * int(count))
    return fitted


# ---- plateaus and the rises between them ----------------------------------------------------------

@dataclass(frozen=True)
class Plateau:
    """A level on a fitted curve: point indices [first, last], and the rise after it as point indices
    [onset, completion] (completion None when the sweep ends on the plateau or inside the rise)."""
    first: int
    last: int
    onset: int | None = None
    completion: int | None = None
    rise_levels_off: bool = True  # False: the curve rises to the end of the sweep, the step is its steep part


def _rises(x: Sequence[float], fit: Sequence[float], index: int) -> bool:
    """The fit rises between points index and index + 1: steeper than FLAT_SLOPE there and over the half
    octave from `index` (on a sweep with several points per octave, neighbours a quarter octave apart
    would otherwise turn timing noise into steep slopes)."""
    if (fit[index + 1] - fit[index]) / (x[index + 1] - x[index]) < FLAT_SLOPE:
        return False
    end = index + 1
    while end < len(x) - 1 and x[end] - x[index] < MIN_PLATEAU_OCTAVES - SIZE_ROUNDING_OCTAVES:
        end += 1
    return (fit[end] - fit[index]) / (x[end] - x[index]) >= FLAT_SLOPE


def _flat_runs(x: Sequence[float], fit: Sequence[float]) -> list[tuple[int, int]]:
    runs, start = [], 0
    for index in range(len(x) - 1):
        if _rises(x, fit, index):
            runs.append((start, index))
            start = index + 1
    runs.append((start, len(x) - 1))
    return [(first, last) for first, last in runs
            if last > first and x[last] - x[first] >= MIN_PLATEAU_OCTAVES - SIZE_ROUNDING_OCTAVES]


def _steep_part(x: Sequence[float], fit: Sequence[float], start: int) -> int:
    """End index of the steep part of a rise from `start` that never levels off."""
    slopes = [(fit[i + 1] - fit[i]) / (x[i + 1] - x[i]) for i in range(start, len(x) - 1)]
    steepest = max(range(len(slopes)), key=slopes.__getitem__)
    end = steepest
    while end + 1 < len(slopes) and slopes[end + 1] >= STEEP_FRACTION * slopes[steepest]:
        end += 1
    return start + end + 1


def _merge_runs(fit: Sequence[float], runs: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Flat runs with less than MIN_STEP_RATIO between them are one plateau."""
    merged: list[tuple[int, int]] = []
    for first, last in runs:
        if merged and fit[first] - fit[merged[-1][1]] < math.log(MIN_STEP_RATIO):
            merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    return merged


def _with_rises(x: Sequence[float], fit: Sequence[float], merged: Sequence[tuple[int, int]]) -> list[Plateau]:
    """Each plateau with the rise after it, [onset, completion] trimmed to where the fit is more than
    SUPPORT_RATIO away from both levels (a bump in the rise's foot or shoulder is not the step)."""
    near = math.log(SUPPORT_RATIO)
    plateaus = []
    for index, (first, last) in enumerate(merged):
        if index + 1 < len(merged):
            completion = merged[index + 1][0]
        elif last < len(x) - 1 and fit[-1] - fit[last] >= math.log(MIN_STEP_RATIO):
            completion = _steep_part(x, fit, last)
        else:
            plateaus.append(Plateau(first, last))
            continue
        onset = last
        while onset + 1 < completion and fit[onset + 1] - fit[last] <= near:
            onset += 1
        while completion - 1 > onset and fit[completion] - fit[completion - 1] <= near and index + 1 < len(merged):
            completion -= 1
        plateaus.append(Plateau(first, last, onset, completion, rise_levels_off=index + 1 < len(merged)))
    return plateaus


def find_plateaus(x: Sequence[float], fit: Sequence[float]) -> list[Plateau]:
    """Plateaus of a non-decreasing `fit` (natural log) over `x` (log2 size), each with the rise after it."""
    return _with_rises(x, fit, _merge_runs(fit, _flat_runs(x, fit)))


def log_midpoint(low: float, high: float) -> float:
    return math.sqrt(low * high)


# ---- cache levels from a latency curve -------------------------------------------------------------

@dataclass(frozen=True)
class CacheLevel:
    level_index: int                 # 1 = closest to the core
    level: str                       # L1, L2 ... or DRAM
    latency_ns: float
    latency_cycles: float | None
    plateau_first_bytes: int
    plateau_last_bytes: int
    capacity_bytes: int | None       # log-midpoint of the rise after the plateau
    onset_bytes: int | None          # last size on the plateau
    completion_bytes: int | None     # first size of the next plateau (or the end of the rise's steep part)
    sysfs_size_bytes: int | None
    note: str | None


@dataclass(frozen=True)
class CacheCurve:
    """The levels of one curve and what the fit did: per size the robust minimum and the fitted value."""
    sizes: list[int]
    minimum_ns: list[float]
    fitted_ns: list[float]
    levels: list[CacheLevel]
    set_aside_bytes: list[int] = field(default_factory=list)   # lone low points the fit ignored
    notes: list[str] = field(default_factory=list)


def per_size_minimum(sizes: Sequence[float], values: Sequence[float]) -> tuple[list, list[float]]:
    """Sorted distinct sizes and, for each, the smallest value measured at it."""
    minimum: dict = {}
    for size, value in zip(sizes, values):
        if value is None or not math.isfinite(value):
            continue
        minimum[size] = min(value, minimum.get(size, math.inf))
    ordered = sorted(minimum)
    return ordered, [minimum[size] for size in ordered]


def _check_curve(sizes: Sequence[float], values: Sequence[float], what: str) -> None:
    if len(sizes) < 2:
        raise InferenceError(f"a {what} needs at least two sizes to infer from; it has {len(sizes)}")
    bad = [(size, value) for size, value in zip(sizes, values) if size <= 0 or value <= 0]
    if bad:
        raise InferenceError(f"a {what} needs positive sizes and values; found {bad[0][0]} -> {bad[0][1]}")


def _mostly_near(values: Sequence[float], level: float) -> bool:
    """At least half of `values` (natural logs) within SUPPORT_RATIO of `level`."""
    return 2 * sum(abs(value - level) <= math.log(SUPPORT_RATIO) for value in values) >= len(values)


def _supported_fit(x: list[float], y: list[float]) -> tuple[list[float], list[Plateau], set[int]]:
    """Envelope fit and its plateaus. A plateau needs two measured points on it (within SUPPORT_RATIO of the
    fit). One held down by a single low point is a dip when that point ends the curve, when most of the
    plateau's other points agree with each other, or when most measured the level the curve returns to
    right after it: the point is set aside and the curve fitted again. Otherwise the plateau is a slow point the
    envelope pulled down into a rise, and no level."""
    ignored: set[int] = set()
    tolerance = math.log(SUPPORT_RATIO)
    while True:
        kept = [index for index in range(len(x)) if index not in ignored]
        x_kept = [x[index] for index in kept]
        y_kept = [y[index] for index in kept]
        fit = lower_envelope(y_kept)
        runs = _flat_runs(x_kept, fit)
        dip = None
        while dip is None:
            merged = _merge_runs(fit, runs)
            for first, last in merged:
                on_it = [position for position in range(first, last + 1) if y_kept[position] - fit[position] <= tolerance]
                if len(on_it) >= 2:
                    continue
                others = [y_kept[position] for position in range(first, last + 1) if position not in on_it]
                after = on_it[0] + 1 if on_it else None
                if on_it and (after == len(kept) or (len(others) >= 2 and _mostly_near(others, statistics.median(others)))
                              or _mostly_near(others, fit[after])):
                    dip = kept[on_it[0]]
                else:
                    runs = [run for run in runs if not first <= run[0] <= last]
                break
            else:
                break
        if dip is None:
            full_fit = [0.0] * len(x)
            for position, index in enumerate(kept):
                full_fit[index] = fit[position]
            # A set-aside point takes the fitted value of the next kept point (the envelope's view of it).
            for index in sorted(ignored, reverse=True):
                later = [full_fit[k] for k in kept if k > index]
                full_fit[index] = later[0] if later else y[index]
            plateaus = _with_rises(x_kept, fit, merged)
            return full_fit, [_reindex(plateau, kept) for plateau in plateaus], ignored
        ignored.add(dip)


def _reindex(plateau: Plateau, kept: list[int]) -> Plateau:
    def at(position):
        return None if position is None else kept[position]
    return Plateau(at(plateau.first), at(plateau.last), at(plateau.onset), at(plateau.completion),
                   plateau.rise_levels_off)


def infer_cache_levels(sizes: Sequence[int], latency_ns: Sequence[float], *,
                       core_clock_ghz: Sequence[float | None] | None = None,
                       sysfs_sizes: Sequence[int] = ()) -> CacheCurve:
    """Cache levels from a latency-vs-working-set curve.

    `sizes` in bytes and `latency_ns` per measured point (several points of one size: their minimum is
    used), `core_clock_ghz` per point where the kernel measured it (for cycles), `sysfs_sizes` the
    data/unified cache sizes the host reports, smallest first (set beside the levels, never used to find them).
    """
    clock_by_size: dict[int, list[float]] = {}
    for index, size in enumerate(sizes):
        clock = core_clock_ghz[index] if core_clock_ghz is not None else None
        if clock:
            clock_by_size.setdefault(size, []).append(clock)
    ordered, minimum = per_size_minimum(sizes, latency_ns)
    _check_curve(ordered, minimum, "latency curve")
    x = [math.log2(size) for size in ordered]
    fit, plateaus, ignored = _supported_fit(x, [math.log(value) for value in minimum])
    notes = []
    if not plateaus:
        notes.append("no plateau: the fitted curve never stays within 16% per octave for half an octave "
                     "over two or more sizes")
    elif plateaus[0].first > 0 and fit[plateaus[0].first] - fit[0] >= math.log(MIN_STEP_RATIO):
        notes.append(f"the curve rises before its first plateau (from {minimum[0]:.3g} ns at {ordered[0]} B): "
                     "that plateau may not be L1")
    sysfs = sorted(size for size in sysfs_sizes if size)
    reaches_memory = bool(sysfs) and ordered[-1] > sysfs[-1]
    levels = []
    for number, plateau in enumerate(plateaus, start=1):
        is_memory = reaches_memory and number == len(plateaus) and number > 1
        levels.append(_cache_level(number, plateau, ordered, fit, clock_by_size, sysfs, is_memory, len(plateaus)))
    return CacheCurve(list(ordered), minimum, [math.exp(value) for value in fit], levels,
                      sorted(ordered[index] for index in ignored), notes)


def _cache_level(number: int, plateau: Plateau, sizes: list[int], fit: list[float],
                 clock_by_size: dict[int, list[float]], sysfs: list[int], is_memory: bool,
                 plateau_count: int) -> CacheLevel:
    notes = []
    latency_ns = math.exp(statistics.median(fit[plateau.first:plateau.last + 1]))
    clocks = [clock for size in sizes[plateau.first:plateau.last + 1] for clock in clock_by_size.get(size, [])]
    # Interference slows the clock loop as it slows the chase: the fastest clock reading is the robust one.
    cycles = latency_ns * max(clocks) if clocks else None
    if clock_by_size and not clocks:
        notes.append("no core clock measured on this plateau: no cycles")
    sysfs_size = None
    if not is_memory:
        if number <= len(sysfs):
            sysfs_size = sysfs[number - 1]
        elif sysfs:
            notes.append("more plateaus than cache levels in sysfs")
    if is_memory and plateau_count - 1 < len(sysfs):
        unseen = ", ".join(str(size) for size in sysfs[plateau_count - 1:])
        notes.append(f"sysfs reports more cache levels than the curve shows (sizes without a plateau: {unseen} B)")
    onset = completion = capacity = None
    if plateau.onset is not None:
        onset, completion = sizes[plateau.onset], sizes[plateau.completion]
        capacity = round(log_midpoint(onset, completion))
        if not plateau.rise_levels_off:
            notes.append(f"the curve still rises after this step, to {math.exp(fit[-1]):.3g} ns at {sizes[-1]} B")
    elif is_memory:
        notes.append("memory: no rise after it within the sweep")
    else:
        notes.append(f"the sweep ends on this plateau (largest size {sizes[-1]} B): its capacity lies beyond"
                     if plateau.last == len(sizes) - 1 else
                     "the curve does not rise clearly after this plateau: no capacity")
        if number == plateau_count and not sysfs:
            notes.append("the last plateau of the sweep: memory if the sweep went past every cache")
    return CacheLevel(number, "DRAM" if is_memory else f"L{number}", latency_ns, cycles,
                      sizes[plateau.first], sizes[plateau.last], capacity, onset, completion, sysfs_size,
                      "; ".join(notes) or None)


# ---- TLB -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TlbLevels:
    """TLB reach from a translation-cost curve (pages touched, one line each)."""
    pages: list[int]
    fitted_ns: list[float]               # fitted latency as an L1-resident chain would see it
    l1_entries: int | None               # log-midpoint of the first step
    l1_onset_pages: int | None
    l1_completion_pages: int | None
    l1_miss_ns: float | None             # the plateau after the first step, above the first plateau: an L2 TLB hit
    l2_entries: int | None
    l2_onset_pages: int | None
    l2_completion_pages: int | None
    walk_ns: float | None                # after the second step, above the first plateau: a page walk
    note: str | None


def infer_tlb(pages: Sequence[int], latency_ns: Sequence[float], *,
              weights: Sequence[float] | None = None) -> TlbLevels:
    """TLB L1/L2 entries and the page-walk cost from ns per access vs pages touched.

    `latency_ns` is what a chain whose lines all hit L1 would take per access: the control chain's L1
    latency plus the paired TLB-minus-control difference (the warehouse), or a plain TLB sweep (a CSV).
    Costs are reported above the first plateau. `weights` (1/std^2) weight the least-squares fit.
    """
    ordered, values = per_size_minimum(pages, latency_ns)
    _check_curve(ordered, values, "TLB curve")
    if weights is not None:
        by_pages = dict(zip(pages, weights))
        weights = [by_pages[count] for count in ordered]
    x = [math.log2(count) for count in ordered]
    fit = isotonic_fit([math.log(value) for value in values], weights)
    plateaus = find_plateaus(x, fit)
    notes = []
    fitted_ns = [math.exp(value) for value in fit]
    if not plateaus:
        return TlbLevels(list(ordered), fitted_ns, None, None, None, None, None, None, None, None,
                         "no plateau in the curve: no TLB level can be read from it")
    base = math.exp(statistics.median(fit[plateaus[0].first:plateaus[0].last + 1]))
    if plateaus[0].first > 0:
        notes.append(f"the curve rises before its first plateau (at {ordered[0]} pages): that may not be the L1 TLB")

    def step(plateau: Plateau | None) -> tuple[int | None, int | None, int | None]:
        if plateau is None or plateau.onset is None:
            return None, None, None
        onset, completion = ordered[plateau.onset], ordered[plateau.completion]
        return round(log_midpoint(onset, completion)), onset, completion

    first = plateaus[0]
    second = plateaus[1] if len(plateaus) > 1 else None
    l1_entries, l1_onset, l1_completion = step(first)
    l2_entries, l2_onset, l2_completion = step(second)
    l1_miss_ns = walk_ns = None
    if second is not None:
        l1_miss_ns = math.exp(statistics.median(fit[second.first:second.last + 1])) - base
    elif l1_entries is not None:
        notes.append("one step only: no plateau after it, so no L2 TLB level")
    if l1_entries is None:
        notes.append(f"no step after the first plateau (up to {ordered[-1]} pages): the sweep stays in the L1 TLB")
    if l2_entries is not None:
        walk_ns = fitted_ns[second.completion] - base
        if len(plateaus) > 2:
            walk_ns = math.exp(statistics.median(fit[plateaus[2].first:plateaus[2].last + 1])) - base
        elif not second.rise_levels_off:
            notes.append(f"page-walk cost taken where the second step ends ({ordered[second.completion]} pages); "
                         f"it keeps growing to {fitted_ns[-1] - base:.3g} ns at {ordered[-1]} pages as page "
                         "tables spill out of the caches")
    elif second is not None:
        notes.append(f"no second step up to {ordered[-1]} pages: the cost after the first step is an L2 TLB hit, "
                     "or a page walk where this page size has no L2 TLB level")
    return TlbLevels(list(ordered), fitted_ns, l1_entries, l1_onset, l1_completion, l1_miss_ns,
                     l2_entries, l2_onset, l2_completion, walk_ns, "; ".join(notes) or None)


# ---- memory-level parallelism ----------------------------------------------------------------------

@dataclass(frozen=True)
class MlpSaturation:
    saturation_chains: int | None    # first k whose MLP(k) reaches SATURATION_FRACTION of the largest
    max_mlp: float | None
    max_mlp_chains: int | None
    note: str | None


def infer_mlp(chains: Sequence[int], mlp: Sequence[float | None]) -> MlpSaturation:
    """Where MLP(k) = t(1)/t(k) stops growing: the core's outstanding-miss limit as this chase sees it."""
    pairs = sorted((k, value) for k, value in zip(chains, mlp) if value is not None and math.isfinite(value))
    if len(pairs) < 2:
        return MlpSaturation(None, None, None, f"{len(pairs)} chain counts with an MLP value: need two or more")
    best_k, best = max(pairs, key=lambda pair: pair[1])
    saturation = next(k for k, value in pairs if value >= SATURATION_FRACTION * best)
    note = None
    if best_k == pairs[-1][0] and saturation == pairs[-1][0]:
        note = f"MLP still grows at the largest k ({best_k}): saturation is at or beyond it"
    return MlpSaturation(saturation, best, best_k, note)


# ---- loaded latency ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LoadedLatency:
    points: int
    idle_latency_ns: float | None          # latency at the lightest load (smallest bandwidth)
    peak_bandwidth_gb_s: float | None
    knee_bandwidth_gb_s: float | None      # Kneedle
    knee_latency_ns: float | None
    doubling_bandwidth_gb_s: float | None  # where latency first reaches twice idle (interpolated)
    knee_outstanding_lines: float | None   # Little's law at the knee: bandwidth / 64 B x latency
    note: str | None


def kneedle_index(x: Sequence[float], y: Sequence[float]) -> int | None:
    """Kneedle (Satopaa et al. 2011) on a convex increasing curve: the point farthest below the chord
    of the normalized curve. None when the curve has no spread to normalize."""
    x_low, x_high, y_low, y_high = min(x), max(x), min(y), max(y)
    if x_high == x_low or y_high == y_low:
        return None
    difference = [(xi - x_low) / (x_high - x_low) - (yi - y_low) / (y_high - y_low) for xi, yi in zip(x, y)]
    best = max(range(len(x)), key=difference.__getitem__)
    return best if difference[best] > 0 else None


def infer_loaded_latency(bandwidth_gb_s: Sequence[float], latency_ns: Sequence[float]) -> LoadedLatency:
    """Idle latency, peak bandwidth, knee, doubling point and Little's-law lines in flight from
    (bandwidth, latency) pairs of a loaded-latency ladder, in any order."""
    pairs = sorted((latency, bandwidth) for bandwidth, latency in zip(bandwidth_gb_s, latency_ns)
                   if bandwidth is not None and latency is not None and bandwidth > 0 and latency > 0)
    if len(pairs) < 3:
        return LoadedLatency(len(pairs), None, None, None, None, None, None,
                             f"{len(pairs)} usable (bandwidth, latency) pairs: need three or more")
    # Latency grows with load while bandwidth may fall back past saturation: order by latency (load).
    latency = [pair[0] for pair in pairs]
    bandwidth = [pair[1] for pair in pairs]
    idle_index = min(range(len(pairs)), key=bandwidth.__getitem__)
    idle = latency[idle_index]
    notes = []
    knee = kneedle_index(bandwidth, latency)
    knee_bw = knee_lat = lines = None
    if knee is None:
        notes.append("no knee: the curve does not bend")
    else:
        knee_bw, knee_lat = bandwidth[knee], latency[knee]
        lines = knee_bw * 1e9 / LINE_BYTES * knee_lat * 1e-9
    doubling = None
    for index in range(1, len(pairs)):
        if latency[index] >= 2 * idle:
            previous = index - 1
            share = (2 * idle - latency[previous]) / (latency[index] - latency[previous])
            doubling = bandwidth[previous] + share * (bandwidth[index] - bandwidth[previous])
            break
    if doubling is None:
        notes.append(f"latency never doubles (largest {max(latency):.4g} ns vs idle {idle:.4g} ns)")
    return LoadedLatency(len(pairs), idle, max(bandwidth), knee_bw, knee_lat, doubling, lines,
                         "; ".join(notes) or None)


# ---- bandwidth kernels ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LevelBandwidth:
    level: str
    bandwidth_gb_s: float | None   # median over the sizes on the level's plateau
    sizes: int                     # bandwidth points on the plateau


def bandwidth_per_level(levels: Sequence[CacheLevel], sizes: Sequence[int],
                        bandwidth_gb_s: Sequence[float]) -> list[LevelBandwidth]:
    """Bandwidth of each inferred level: the median of a bandwidth sweep's points whose size lies on the
    level's latency plateau. Sizes beyond the last plateau's end count for the memory level."""
    result = []
    for position, level in enumerate(levels):
        is_last = position == len(levels) - 1
        inside = [value for size, value in zip(sizes, bandwidth_gb_s)
                  if level.plateau_first_bytes <= size and (size <= level.plateau_last_bytes or is_last)]
        result.append(LevelBandwidth(level.level, statistics.median(inside) if inside else None, len(inside)))
    return result


@dataclass(frozen=True)
class AmatFit:
    hit_ns: float | None         # runtime per access at miss rate 0
    miss_penalty_ns: float | None
    r_squared: float | None
    note: str | None


def amat_fit(miss_rate: Sequence[float], runtime_ns: Sequence[float]) -> AmatFit:
    """Average memory access time from a SAXPY-like sweep: runtime = hit + miss_rate x penalty, least
    squares over (miss rate from counters, ns per access) pairs."""
    pairs = [(rate, time) for rate, time in zip(miss_rate, runtime_ns) if rate is not None and time is not None]
    if len(pairs) < 3:
        return AmatFit(None, None, None, f"{len(pairs)} points with a miss rate: need three or more")
    rates = [rate for rate, _ in pairs]
    if max(rates) == min(rates):
        return AmatFit(None, None, None, "every point has the same miss rate: no slope to fit")
    times = [time for _, time in pairs]
    slope, intercept = statistics.linear_regression(rates, times)
    mean_time = statistics.fmean(times)
    total = sum((time - mean_time) ** 2 for time in times)
    residual = sum((time - intercept - slope * rate) ** 2 for rate, time in pairs)
    return AmatFit(intercept, slope, 1 - residual / total if total else None, None)
