"""Infer a host's memory hierarchy from its measured curves (docs/methods.md, "Inferring the hierarchy from a curve").

Pure functions over plain sequences, so the warehouse (fleetscope.analyze.derive), `fleetscope infer --csv` and the
notebooks share one method. What cannot be inferred is None with a note saying why, never a guess.

The method, for a latency-vs-working-set curve:
1. per size, the robust minimum (the caller's per-point minimum; several rows of one size: their minimum).
   A relative curve (ns over L1, as tinymembench prints) is read on top of an assumed L1 latency
   (Tuning.relative_l1_ns) and reported in its own terms;
2. a non-decreasing fit of ln(latency) over log2(size). Timing noise on an idle machine only ever adds
   time, so cache curves use the lower monotone envelope (each point lowered to the smallest value at
   or after it): a spike, or a whole point measured slow, is ignored. Where most points lie well above
   that envelope the noise goes both ways (single samples of a noisy table) and the median fit is used,
   which a low point cannot drag down;
3. flat runs: where the fit grows less than FLAT_SLOPE per octave, at least MIN_PLATEAU_OCTAVES long
   with at least two measured points on it (within SUPPORT_RATIO of the fit). A flat run held down by one
   low point is either a dip (the point is set aside, reported, and the curve fitted again) or a slow
   point the envelope pulled down into a rise (no run): see _supported_fit;
4. levels: consecutive flat runs less than Tuning.level_step_ratio apart are one level. Cache levels
   differ by 2x and more; a smaller step is what a TLB miss adds on top of the level it happens on (a
   chase that touches one line per page meets its L1 DTLB reach at entries x page size, e.g. 64 x 4 KiB),
   reported as a TLB step of that level with its entries when the pattern touches every page and the
   step stands out of the points' scatter, never as a level;
5. hidden levels: a cache hands over to the next within about an octave, so a rise that puts less than
   Tuning.split_concentration of its log gain into any one octave holds two hand-overs (a level the sweep
   passes in one point, as a 6 MiB L3 between 2 MiB and 8 MiB points). It is split at the point that
   leaves each part one concentrated hand-over at least Tuning.hidden_step_ratio high; that level's
   confidence is 'low';
6. each level's latency is the fit's median over its first flat run; its rise is [onset, completion] = the
   last size of the plateau and the first size of the next, each moved into the rise past sizes whose fit is
   within SUPPORT_RATIO of the level. Confidence 'high' when the rise is one sample step, 'interval' when it
   spans several, 'low' for a level found in step 5;
7. its size (docs/methods.md, "Reading a size from a rise"): a bracket of two neighbouring measured sizes
   around the point of the rise that the cache's physics puts at its capacity, chosen per level
   (size_estimator): the ONSET (the last size still within SUPPORT_RATIO of the plateau, and the next) where
   the chase's lines fill the level's sets evenly, so that no replacement policy misses before capacity (a
   level whose way span, size / ways, fits in the physically contiguous run of the buffer: an L1 indexed
   within a page; any level on huge pages on bare metal), and for the last cache level before memory, whose
   adaptive or victim replacement keeps serving part of a cyclic working set past capacity; the SET-LOAD
   model where the lines fall on the level's sets at random (4 KiB pages, or a guest, whose host may back it
   with 4 KiB pages): sets overflow from well below capacity, so the capacity is where the rise, fitted with
   the modelled share of misses of Poisson-loaded sets under LRU-like or random replacement (whichever fits
   better: about half of the accesses miss at capacity under LRU-like replacement, a fifth under random), puts
   it; its bracket is the two measured sizes around that capacity. A shelf inside the rise (SHELF_OCTAVES or more that
   climbs less than half as steeply as the rise before it, with a level's step below and above: a guest's L3
   share that climbs too steeply for a plateau) ends the rise: the model's top is the shelf, not memory. The best
   estimate (capacity_bytes, size_method) is the stated size (sysfs, or the published size of a reference
   host) where it lies in the bracket; else the bracket's log-midpoint where the bracket is resolved (at most
   RESOLVED_OCTAVES wide); else none: a coarse curve gives its bracket, not a number it cannot resolve.

For a TLB curve (ns per access vs pages touched) every step is a TLB level however small (a miss that hits
the L2 TLB may add ~1 ns): the difference of two chains is noisy both ways and gets the least-squares
isotonic fit, and the smallest step is set by the points' scatter (NOISE_STEP_FACTOR), not by a ratio. A TLB
fills its sets evenly (indexed by virtual page), so its entries are its reach: where the step's shape (an LRU-like
cliff, a 4-way LRU ramp, or a random-replacement TLB's gradual rise, whichever fits) puts it, not the first point
that stands out of the scatter (a quarter octave late for a random TLB).
"""

from __future__ import annotations

import bisect
import heapq
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

# Version of the method below; stored with every inferred row so a change can be recomputed. 3: TLB steps within
# levels, hidden levels in wide rises, relative curves, confidence; 4: consistency and noise flags; 5: one
# hierarchy per core kind; 6: loaded-latency knee only on a rise, as an interval; 7: L1-hit and firmware checks;
# 8: the clock's turbo curve and ramp (fleetscope.analyze.clock); 10: workload cases and function tables
# (fleetscope.analyze.profiling); 11: sizes as brackets around the onset or the set-load model's capacity, with a
# best estimate and its method (9 on the sweeps branch before main's 10); 12: a rise ends at a shelf, TLB reaches
# from the step's shape; 13: a shelf of three quarters of an octave ends a rise; 14: a level resting on one point
# gives its bracket, not a number; 15: a TLB step on the curve's last point alone reads no L2 TLB; 16: a shelf is
# measured against the rise's steepest slope over a quarter octave, not between neighbouring points; 17: a TLB
# step where the control chain leaves a data cache reads no L2 TLB; 18: a level its host states direct-mapped
# (one way) is read by the set-load model, where it failed the whole run's derivation; 19: a set-load rise that
# fits both replacements within its points' scatter is bracketed across both readings, not given the nearer's number.
INFERENCE_VERSION = 19

FLAT_SLOPE = 0.15              # ln(latency) per octave: flatter than this is a plateau (16% per octave)
MIN_PLATEAU_OCTAVES = 0.5      # a plateau spans at least half an octave
SIZE_ROUNDING_OCTAVES = 0.05   # swept sizes are rounded to whole lines: 2^15.5 B is 46336, not 46341
SUPPORT_RATIO = 1.10           # a measured point lies on its plateau when within 10% of the fit
TWO_SIDED_SCATTER = 0.03       # ln: a median point this far above the lower envelope: noise both ways
NOISE_STEP_FACTOR = 3          # a step within a level is reported when at least 3 x the points' scatter
MIN_TLB_ENTRIES = 8            # no TLB has fewer entries: a step at fewer pages is not a TLB's reach
CONTROL_STEP_RATIO = 1.5       # a TLB curve's control chain this much slower than before: its lines left a cache
MAX_SET_ASIDE = 16             # lone low points set aside in one curve (each costs a fit of the whole curve)
STEEP_FRACTION = 0.5           # a rise that never levels off: its pairs at least half as steep as the steepest
SATURATION_FRACTION = 0.9      # MLP saturates at the first k reaching 90% of the largest MLP(k)
LINE_BYTES = 64
PATTERNS = ("random-lines", "line-per-page", "sequential")
SMALL_PAGE_BYTES = 4096
HUGE_PAGE_BYTES = 2 * 1024 * 1024
# A size bracket this narrow (in octaves) is resolved: its log-midpoint is within 0.14 octave (10%) of any size
# in it. Sweep sizes are rounded down to whole lines (pages), so a quarter-octave bisection comes out a little wider.
RESOLVED_OCTAVES = 0.25 + SIZE_ROUNDING_OCTAVES / 2
ESTIMATORS = ("onset", "set-load")


@dataclass(frozen=True)
class Tuning:
    """The cache-level method's constants that were chosen on data: on synthetic hierarchies and on published
    curves (benchmarks/inference_accuracy.py re-chooses them with each real curve left out)."""
    level_step_ratio: float = 1.8     # flat runs closer than this are one level (the step: a TLB miss's cost)
    split_concentration: float = 0.5  # one hand-over puts at least this share of its rise into one octave
    hidden_step_ratio: float = 2.5    # a level found inside a rise is at least this far from both neighbours
    relative_l1_ns: float = 1.0       # the L1 latency a relative curve is read on top of


TUNING = Tuning()


@dataclass(frozen=True)
class CurveReading:
    """What a curve is, where the tool cannot know it (a curve measured by another tool).

    pattern: how the chase walks its buffer: 'random-lines' (random lines anywhere, as fleetscope's chase;
    a TLB miss rate grows gradually past the reach), 'line-per-page' (one line per page, as ramlat, so a
    TLB reach shows as a step at entries x page_bytes), or 'sequential' (TLB misses amortized over a page).
    relative: latencies are ns over L1 (tinymembench), so the first plateau reads 0.
    """
    pattern: str = "random-lines"
    page_bytes: int = 4096
    relative: bool = False


class InferenceError(ValueError):
    """The input cannot be inferred from (too few points, non-positive values ...); the message says why."""


# ---- fits ------------------------------------------------------------------------------------------

def lower_envelope(values: Sequence[float]) -> list[float]:
    """The largest non-decreasing sequence below `values`: each value lowered to the smallest at or after it."""
    fitted = list(values)
    for index in range(len(fitted) - 2, -1, -1):
        fitted[index] = min(fitted[index], fitted[index + 1])
    return fitted


class _MedianBlock:
    """A block of pooled values and its median, kept in two heaps (the lower half as negatives), so a merge
    costs the smaller block's size times a log, not a sort of the merged block."""

    def __init__(self, value: float):
        self.low, self.high = [-value], []

    def __len__(self) -> int:
        return len(self.low) + len(self.high)

    def add(self, value: float) -> None:
        if value <= -self.low[0]:
            heapq.heappush(self.low, -value)
        else:
            heapq.heappush(self.high, value)
        if len(self.low) > len(self.high) + 1:
            heapq.heappush(self.high, -heapq.heappop(self.low))
        elif len(self.high) > len(self.low):
            heapq.heappush(self.low, -heapq.heappop(self.high))

    def merged(self, other: _MedianBlock) -> _MedianBlock:
        larger, smaller = (self, other) if len(self) >= len(other) else (other, self)
        for value in [-value for value in smaller.low] + smaller.high:
            larger.add(value)
        return larger

    def median(self) -> float:
        # as statistics.median: the middle value, or the mean of the two middle ones
        return -self.low[0] if len(self.low) > len(self.high) else (-self.low[0] + self.high[0]) / 2


def median_isotonic_fit(values: Sequence[float]) -> list[float]:
    """The least-absolute-deviations non-decreasing fit: pool adjacent violators on block medians. Each value
    moves between blocks only when it is in the smaller of two merged blocks (at most log n times), so a
    falling curve of n points costs n log^2 n, not the n^2 of re-sorting a growing block."""
    blocks: list[_MedianBlock] = []
    for value in values:
        blocks.append(_MedianBlock(value))
        while len(blocks) > 1 and blocks[-2].median() > blocks[-1].median():
            later = blocks.pop()
            blocks[-1] = blocks[-1].merged(later)
    return [block.median() for block in blocks for _unused in range(len(block))]


def cache_curve_fit(values: Sequence[float]) -> list[float]:
    """The lower envelope, unless the points scatter both ways (most lie more than TWO_SIDED_SCATTER above
    it: single samples of a noisy table, not minima of many): then the median fit, which a low point cannot
    drag down."""
    envelope = lower_envelope(values)
    if statistics.median(value - fitted for value, fitted in zip(values, envelope)) > TWO_SIDED_SCATTER:
        return median_isotonic_fit(values)
    return envelope


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
    for mean, _unused, count in blocks:
        fitted.extend([mean] * int(count))
    return fitted


# ---- plateaus and the rises between them ----------------------------------------------------------

Run = tuple[int, int]  # point indices [first, last] of a flat run


@dataclass(frozen=True)
class Plateau:
    """A level on a fitted curve: point indices [first, last], and the rise after it as point indices
    [onset, completion] (completion None when the sweep ends on the plateau or inside the rise).
    base_last ends the level's first flat run (its latency); steps are the [onset, completion] of the
    smaller steps between its flat runs; a plateau of one point (first == last) is a hidden level."""
    first: int
    last: int
    base_last: int
    onset: int | None = None
    completion: int | None = None
    rise_levels_off: bool = True  # False: the curve rises to the end of the sweep, the step is its steep part
    steps: tuple[tuple[int, int], ...] = ()


def _half_octave_ends(x: Sequence[float]) -> list[int]:
    """For each point but the last, the first point at least half an octave on (or the last point), found
    by one pointer moving forward: a scan from each point was quadratic on a dense sweep."""
    ends, end = [], 0
    for index in range(len(x) - 1):
        end = max(end, index + 1)
        while end < len(x) - 1 and x[end] - x[index] < MIN_PLATEAU_OCTAVES - SIZE_ROUNDING_OCTAVES:
            end += 1
        ends.append(end)
    return ends


def _rises(x: Sequence[float], fit: Sequence[float], index: int, end: int, flat_slope: float) -> bool:
    """The fit rises between points index and index + 1: steeper than `flat_slope` there and over the half
    octave from `index` to `end` (on a sweep with several points per octave, neighbours a quarter octave
    apart would otherwise turn timing noise into steep slopes)."""
    if (fit[index + 1] - fit[index]) / (x[index + 1] - x[index]) < flat_slope:
        return False
    return (fit[end] - fit[index]) / (x[end] - x[index]) >= flat_slope


def _flat_runs(x: Sequence[float], fit: Sequence[float], flat_slope: float = FLAT_SLOPE) -> list[Run]:
    runs, start = [], 0
    for index, end in enumerate(_half_octave_ends(x)):
        if _rises(x, fit, index, end, flat_slope):
            runs.append((start, index))
            start = index + 1
    runs.append((start, len(x) - 1))
    return [(first, last) for first, last in runs
            if last > first and x[last] - x[first] >= MIN_PLATEAU_OCTAVES - SIZE_ROUNDING_OCTAVES]


def _steep_part(x: Sequence[float], fit: Sequence[float], start: int, end: int | None = None) -> int:
    """End index of the steep part of a rise from `start` that never levels off (or that ends at `end`)."""
    slopes = [(fit[i + 1] - fit[i]) / (x[i + 1] - x[i]) for i in range(start, (len(x) if end is None else end + 1) - 1)]
    steepest = max(range(len(slopes)), key=slopes.__getitem__)
    end = steepest
    while end + 1 < len(slopes) and slopes[end + 1] >= STEEP_FRACTION * slopes[steepest]:
        end += 1
    return start + end + 1


def _run_level(fit: Sequence[float], run: Run) -> float:
    return statistics.median(fit[run[0]:run[1] + 1])


def _group_runs(fit: Sequence[float], runs: Sequence[Run], step_ratio: float) -> list[list[Run]]:
    """Consecutive flat runs less than `step_ratio` apart are one level (TLB steps stack: an L2 TLB's page
    walks on top of the L1 TLB's misses)."""
    groups: list[list[Run]] = []
    for run in runs:
        if groups and _run_level(fit, run) - _run_level(fit, groups[-1][-1]) < math.log(step_ratio):
            groups[-1].append(run)
        else:
            groups.append([run])
    return groups


def _octave_reaches(x: Sequence[float]) -> list[int]:
    """For each point, the last point within an octave of it (at least the next one): how far one
    hand-over starting there reaches. One pointer moving forward finds them all."""
    reaches, reach = [], 0
    for index in range(len(x)):
        reach = max(reach, index + 1)
        while reach + 1 < len(x) and x[reach + 1] - x[index] <= 1 + SIZE_ROUNDING_OCTAVES:
            reach += 1
        reaches.append(reach)
    return reaches


def _share(best: float, gain: float) -> float:
    return best / gain if gain > 0 else 1.0


def _concentration(fit: Sequence[float], reaches: Sequence[int], start: int, end: int) -> float:
    """The largest share of the fit's gain from `start` to `end` that falls within one octave."""
    best = max((fit[min(reaches[index], end)] - fit[index] for index in range(start, end)), default=0.0)
    return _share(max(best, 0.0), fit[end] - fit[start])


def _hidden_levels(fit: Sequence[float], reaches: Sequence[int], start: int, end: int, tuning: Tuning) -> list[int]:
    """Points between two levels (indices start, end) that are levels themselves: where a rise too spread to
    be one hand-over splits into two that each are one, at least hidden_step_ratio high (best split first).

    Every point between is tried as the split, and the concentration of both parts is known for all of them
    in one pass each (linear in the rise): the part after a point takes the largest one-octave gain of the
    points from it to `end`, a running maximum from the end; the part before it, those from `start`, where
    a hand-over that would reach past the split point is cut there (the fit is non-decreasing, so of those
    the first gains most)."""
    smallest = math.log(tuning.hidden_step_ratio)
    if end - start < 3 or _concentration(fit, reaches, start, end) >= tuning.split_concentration:
        return []
    after = {}
    best = 0.0
    for middle in range(end - 1, start, -1):
        best = max(best, fit[min(reaches[middle], end)] - fit[middle])
        after[middle] = _share(best, fit[end] - fit[middle])
    candidates = []
    reached_before, first_cut = 0.0, start  # hand-overs from points before first_cut end before the split
    for middle in range(start + 1, end):
        while reaches[first_cut] < middle:
            reached_before = max(reached_before, fit[reaches[first_cut]] - fit[first_cut])
            first_cut += 1
        before = _share(max(reached_before, fit[middle] - fit[first_cut]), fit[middle] - fit[start])
        if fit[middle] - fit[start] >= smallest and fit[end] - fit[middle] >= smallest:
            share = min(before, after[middle])
            if share >= tuning.split_concentration:
                candidates.append((share, middle))
    if not candidates:
        return []
    _unused, middle = max(candidates)
    return [*_hidden_levels(fit, reaches, start, middle, tuning), middle,
            *_hidden_levels(fit, reaches, middle, end, tuning)]


def _split_wide_rises(x: Sequence[float], fit: Sequence[float], groups: list[list[Run]],
                      tuning: Tuning) -> list[list[Run]]:
    """Levels with the hidden levels of the rises after them (the last one's rise: to the end of the sweep)."""
    reaches = _octave_reaches(x)
    result: list[list[Run]] = []
    for group, following in zip(groups, [*groups[1:], None]):
        result.append(group)
        end = following[0][0] if following is not None else len(x) - 1
        result += [[(middle, middle)] for middle in _hidden_levels(fit, reaches, group[-1][1], end, tuning)]
    return result


def _trimmed(fit: Sequence[float], last: int, completion: int, trim_completion: bool) -> tuple[int, int]:
    """A rise from the plateau ending at `last` to `completion`, trimmed to where the fit is more than
    SUPPORT_RATIO away from both levels (a bump in the rise's foot or shoulder is not the step)."""
    near = math.log(SUPPORT_RATIO)
    onset = last
    while onset + 1 < completion and fit[onset + 1] - fit[last] <= near:
        onset += 1
    while trim_completion and completion - 1 > onset and fit[completion] - fit[completion - 1] <= near:
        completion -= 1
    return onset, completion


def _with_rises(x: Sequence[float], fit: Sequence[float], groups: Sequence[list[Run]],
                step_ratio: float) -> list[Plateau]:
    """Each level with the rise after it and the steps between its flat runs; the curve's end rises after the
    last level when it ends at least `step_ratio` above it."""
    plateaus = []
    for index, group in enumerate(groups):
        first, last = group[0][0], group[-1][1]
        steps = tuple(_trimmed(fit, run[1], following[0], True) for run, following in zip(group, group[1:]))
        if index + 1 < len(groups):
            onset, completion = _trimmed(fit, last, groups[index + 1][0][0], True)
        elif last < len(x) - 1 and fit[-1] - fit[last] >= math.log(step_ratio):
            onset, completion = _trimmed(fit, last, _steep_part(x, fit, last), False)
        else:
            plateaus.append(Plateau(first, last, group[0][1], steps=steps))
            continue
        plateaus.append(Plateau(first, last, group[0][1], onset, completion, index + 1 < len(groups), steps))
    return plateaus


def log_midpoint(low: float, high: float) -> float:
    return math.sqrt(low * high)


# ---- cache levels from a latency curve -------------------------------------------------------------

@dataclass(frozen=True)
class CacheLevel:
    level_index: int                 # 1 = closest to the core
    level: str                       # L1, L2 ... or DRAM
    latency_ns: float                # in the curve's terms: ns over L1 for a relative curve
    latency_cycles: float | None
    plateau_first_bytes: int
    plateau_last_bytes: int
    capacity_bytes: int | None       # the best estimate of its size (size_method says how), None: a bracket only
    onset_bytes: int | None          # the rise after the plateau: last size on the plateau ...
    completion_bytes: int | None     # ... first size of the next plateau (or the end of the rise's steep part)
    sysfs_size_bytes: int | None
    note: str | None
    # of the rise: 'high' (one sample step), 'interval' (several), 'low' (a level resting on one point)
    confidence: str | None = None
    size_low_bytes: int | None = None    # the size bracket: two neighbouring measured sizes around ...
    size_high_bytes: int | None = None
    size_estimator: str | None = None    # ... the rise's 'onset' or its 'set-load' model (ESTIMATORS; module docstring)
    # how capacity_bytes was chosen: 'sysfs' or 'published' (the stated size lies in the bracket), 'onset' or
    # 'set-load' (the onset bracket's log-midpoint, the set-load model's capacity); None where the bracket is too wide to give a number
    size_method: str | None = None


@dataclass(frozen=True)
class TlbStep:
    """A step inside a cache level that is smaller than a level step: what a TLB miss adds at the TLB's reach."""
    level: str                       # the cache level it sits on
    onset_bytes: int
    completion_bytes: int
    reach_bytes: int                 # log-midpoint of [onset, completion]
    entries: int | None              # reach / page size, where the pattern makes the reach show as a step
    onset_entries: int | None
    completion_entries: int | None
    added_ns: float


@dataclass(frozen=True)
class CacheCurve:
    """The levels of one curve and what the fit did: per size the robust minimum and the fitted value."""
    sizes: list[int]
    minimum_ns: list[float]
    fitted_ns: list[float]
    levels: list[CacheLevel]
    set_aside_bytes: list[int] = field(default_factory=list)   # lone low points the fit ignored
    notes: list[str] = field(default_factory=list)
    tlb_steps: list[TlbStep] = field(default_factory=list)
    relative: bool = False           # latencies are ns over L1, as the curve gave them
    brackets: list[LevelBrackets] = field(default_factory=list)  # each level's onset and set-load brackets, for refinement


@dataclass(frozen=True)
class LevelBrackets:
    """Both candidate points of one level's rise, each as two neighbouring measured sizes: where the curve
    leaves the plateau (onset) and around the capacity the set-load model puts it at (set_load). An adaptive sweep
    (fleetscope.analyze.refine) measures inside both until they are narrow enough; the level's size reads the
    one its physics picks."""
    level: str
    onset: tuple[int, int]
    set_load: tuple[int, int]
    estimator: str = "onset"        # the one the level's size reads (size_estimator) ...
    measured_bytes: float = 0.0     # ... and the curve's own estimate inside it, whatever sysfs says


def per_size_minimum(sizes: Sequence[float], values: Sequence[float]) -> tuple[list, list[float]]:
    """Sorted distinct sizes and, for each, the smallest value measured at it."""
    minimum: dict = {}
    for size, value in zip(sizes, values):
        if value is None or not math.isfinite(value):
            continue
        minimum[size] = min(value, minimum.get(size, math.inf))
    ordered = sorted(minimum)
    return ordered, [minimum[size] for size in ordered]


def _check_curve(sizes: Sequence[float], values: Sequence[float], what: str, relative: bool = False) -> None:
    if len(sizes) < 2:
        raise InferenceError(f"a {what} needs at least two sizes to infer from; it has {len(sizes)}")
    bad = [(size, value) for size, value in zip(sizes, values) if size <= 0 or (value <= 0 and not relative)]
    if bad:
        raise InferenceError(f"a {what} needs positive sizes and values; found {bad[0][0]} -> {bad[0][1]}"
                             + ("" if bad[0][0] <= 0 else " (ns over L1? read it as relative)"))


def _mostly_near(values: Sequence[float], level: float) -> bool:
    """At least half of `values` (natural logs) within SUPPORT_RATIO of `level`."""
    return 2 * sum(abs(value - level) <= math.log(SUPPORT_RATIO) for value in values) >= len(values)


def _supported_fit(x: list[float], y: list[float], tuning: Tuning) -> tuple[list[float], list[Plateau], set[int]]:
    """The fit and its levels. A flat run needs two measured points on it (within SUPPORT_RATIO of the fit).
    One held down by a single low point is a dip when that point ends the curve, when most of the run's
    other points agree with each other, or when most measured the level the curve returns to right after
    it: the point is set aside and the curve fitted again. Otherwise the run is a slow point the envelope
    pulled down into a rise, and no level."""
    ignored: set[int] = set()
    tolerance = math.log(SUPPORT_RATIO)
    while True:
        kept = [index for index in range(len(x)) if index not in ignored]
        x_kept = [x[index] for index in kept]
        y_kept = [y[index] for index in kept]
        fit = cache_curve_fit(y_kept)
        supported, dip = [], None
        for first, last in _flat_runs(x_kept, fit):
            on_it = [position for position in range(first, last + 1) if y_kept[position] - fit[position] <= tolerance]
            if len(on_it) >= 2:
                supported.append((first, last))
                continue
            others = [y_kept[position] for position in range(first, last + 1) if position not in on_it]
            after = on_it[0] + 1 if on_it else None
            if on_it and len(ignored) < MAX_SET_ASIDE and (
                    after == len(kept) or (len(others) >= 2 and _mostly_near(others, statistics.median(others)))
                    or _mostly_near(others, fit[after])):
                dip = kept[on_it[0]]
                break
            # a run without support is no level (and, past MAX_SET_ASIDE dips, neither is a dip's)
        if dip is None:
            groups = _group_runs(fit, supported, tuning.level_step_ratio)
            full_fit = [0.0] * len(x)
            for position, index in enumerate(kept):
                full_fit[index] = fit[position]
            # A set-aside point takes the fitted value of the next kept point (the envelope's view of it).
            for index in ignored:
                later = bisect.bisect_right(kept, index)
                full_fit[index] = fit[later] if later < len(kept) else y[index]
            plateaus = _with_rises(x_kept, fit, _split_wide_rises(x_kept, fit, groups, tuning), tuning.level_step_ratio)
            return full_fit, [_reindex(plateau, kept) for plateau in plateaus], ignored
        ignored.add(dip)


def _reindex(plateau: Plateau, kept: list[int]) -> Plateau:
    def at(position):
        return None if position is None else kept[position]
    return Plateau(at(plateau.first), at(plateau.last), at(plateau.base_last), at(plateau.onset),
                   at(plateau.completion), plateau.rise_levels_off,
                   tuple((kept[onset], kept[completion]) for onset, completion in plateau.steps))


def infer_cache_levels(sizes: Sequence[int], latency_ns: Sequence[float], *,
                       core_clock_ghz: Sequence[float | None] | None = None,
                       sysfs_sizes: Sequence[int] = (), reading: CurveReading = CurveReading(),
                       placement: Placement | None = None, tuning: Tuning = TUNING) -> CacheCurve:
    """Cache levels from a latency-vs-working-set curve.

    `sizes` in bytes and `latency_ns` per measured point (several points of one size: their minimum is
    used), `core_clock_ghz` per point where the kernel measured it (for cycles), `sysfs_sizes` the
    data/unified cache sizes the host reports, smallest first (set beside the levels and taken as a size's best
    estimate where it lies in the level's bracket; never used to find levels or brackets), `reading` what the
    curve is (pattern, page size, relative), `placement` how its lines fall on the caches' sets (which point of
    each rise is the capacity; default: the reading's page size is the contiguous run, way spans unknown).
    """
    clock_by_size: dict[int, list[float]] = {}
    for index, size in enumerate(sizes):
        clock = core_clock_ghz[index] if core_clock_ghz is not None else None
        if clock:
            clock_by_size.setdefault(size, []).append(clock)
    ordered, minimum = per_size_minimum(sizes, latency_ns)
    _check_curve(ordered, minimum, "latency curve", reading.relative)
    notes = []
    offset = 0.0
    if reading.relative:
        offset = tuning.relative_l1_ns - min([0.0, *minimum])
        notes.append(f"relative curve: latencies are ns over L1 as given; levels were found on them plus an assumed "
                     f"L1 latency of {offset:.3g} ns")
    x = [math.log2(size) for size in ordered]
    y = [math.log(value + offset) for value in minimum]
    fit, plateaus, ignored = _supported_fit(x, y, tuning)
    if not plateaus:
        notes.append("no plateau: the fitted curve never stays within 16% per octave for half an octave "
                     "over two or more sizes")
    elif plateaus[0].first > 0 and fit[plateaus[0].first] - fit[0] >= math.log(tuning.level_step_ratio):
        notes.append(f"the curve rises before its first plateau (from {minimum[0]:.3g} ns at {ordered[0]} B): "
                     "that plateau may not be L1")
    if len(ignored) >= MAX_SET_ASIDE:
        notes.append(f"{MAX_SET_ASIDE} lone low points set aside (the most one curve may have); a flat run held down "
                     "by a further one is read as no level")
    scatter = _scatter(y, fit, ignored)
    smallest_step = max(math.log(SUPPORT_RATIO), NOISE_STEP_FACTOR * scatter)
    if smallest_step > math.log(SUPPORT_RATIO):
        notes.append(f"the points scatter by about {math.expm1(scatter):.0%} around the fit: steps smaller than "
                     f"{math.expm1(smallest_step):.0%} within a level cannot be told from that noise")
    sysfs = sorted(size for size in sysfs_sizes if size)
    reaches_memory = bool(sysfs) and ordered[-1] > sysfs[-1]
    placement = placement or placement_of(reading)
    levels, tlb_steps, brackets = [], [], []
    for number, plateau in enumerate(plateaus, start=1):
        # the last plateau is memory when the sweep passed every stated cache and the curve has more plateaus than
        # there are caches, or the plateau itself passes the largest (a last cache whose rise is still under way
        # at the sweep's end leaves its own plateau last, not memory's; a VM's LLC may act far smaller than stated)
        is_memory = (reaches_memory and number == len(plateaus) and number > 1
                     and (len(plateaus) > len(sysfs) or ordered[plateau.last] > sysfs[-1]))
        level = _cache_level(number, plateau, ordered, fit, offset, clock_by_size, sysfs, is_memory, len(plateaus))
        following = plateaus[number] if number < len(plateaus) else None
        is_last_cache = number == len(plateaus) - 1 and (reaches_memory or not sysfs)
        on_curve = [fit[index] if index in ignored else value for index, value in enumerate(y)]  # dips set aside
        level, bracket = _sized(level, plateau, following, ordered, fit, on_curve, placement, sysfs, is_last_cache,
                                scatter)
        brackets += [bracket] if bracket else []
        steps = [_step(level.level, onset, completion, ordered, fit, reading)
                 for onset, completion in plateau.steps if fit[completion] - fit[onset] >= smallest_step]
        if steps:
            level = replace(level, note="; ".join(filter(None, (level.note, _steps_note(steps, reading)))))
        levels.append(level)
        tlb_steps += [step for step in steps if step.entries is not None]
    return CacheCurve(list(ordered), minimum, [math.exp(value) - offset for value in fit], levels,
                      sorted(ordered[index] for index in ignored), notes, tlb_steps, reading.relative, brackets)


def _scatter(y: Sequence[float], fit: Sequence[float], ignored: set[int]) -> float:
    """Robust standard deviation of the points around a cache curve's fit (natural log), 1.4826 x median
    |residual|: the envelope or median fit does not follow the noise, and at one point per octave half of the
    neighbour differences would be steps (_neighbour_scatter)."""
    return 1.4826 * statistics.median(abs(y[index] - fit[index]) for index in range(len(y)) if index not in ignored)


def _neighbour_scatter(y: Sequence[float]) -> float:
    """Robust standard deviation of a TLB curve's points from the differences of neighbours, 1.4826 x median
    |y[i+1] - y[i]| / sqrt(2): its least-squares fit follows the noise (residuals would understate it), and
    its two or three steps are few among the differences."""
    return 1.4826 * statistics.median(abs(b - a) for a, b in zip(y, y[1:])) / math.sqrt(2)


def _step(level: str, onset: int, completion: int, sizes: list[int], fit: list[float],
          reading: CurveReading) -> TlbStep:
    """A step within a level; `entries` is None where it cannot be a TLB's reach (a sequential pattern, or
    fewer pages than any TLB has entries)."""
    onset_bytes, completion_bytes = sizes[onset], sizes[completion]
    reach = round(log_midpoint(onset_bytes, completion_bytes))
    added = math.exp(fit[completion]) - math.exp(fit[onset])
    page = reading.page_bytes
    if reading.pattern == "sequential" or completion_bytes < MIN_TLB_ENTRIES * page:
        return TlbStep(level, onset_bytes, completion_bytes, reach, None, None, None, added)
    return TlbStep(level, onset_bytes, completion_bytes, reach, round(reach / page), onset_bytes // page,
                   completion_bytes // page, added)


def _steps_note(steps: list[TlbStep], reading: CurveReading) -> str:
    from fleetscope.units import format_bytes

    def where(step: TlbStep) -> str:
        return f"+{step.added_ns:.3g} ns at [{format_bytes(step.onset_bytes)}, {format_bytes(step.completion_bytes)}]"

    parts = []
    tlb = [step for step in steps if step.entries is not None]
    if tlb:
        how = ("one line per page meets a TLB's reach at entries x page size" if reading.pattern == "line-per-page"
               else "with random lines a TLB's misses start at its reach and grow past it")
        parts.append("TLB step within this level, not a cache level: " + "; ".join(
            f"{where(step)} = {step.onset_entries}-{step.completion_entries} entries of "
            f"{format_bytes(reading.page_bytes)} pages" for step in tlb) + f" ({how})")
    other = [step for step in steps if step.entries is None]
    if other:
        why = ("a sequential walk shares each TLB miss among a page's lines" if reading.pattern == "sequential"
               else f"fewer than {MIN_TLB_ENTRIES} pages, no TLB's reach")
        parts.append("a step within this level, smaller than a level step and not a TLB reach "
                     f"({why}): " + "; ".join(map(where, other)))
    return "; ".join(parts)


def _cache_level(number: int, plateau: Plateau, sizes: list[int], fit: list[float], offset: float,
                 clock_by_size: dict[int, list[float]], sysfs: list[int], is_memory: bool,
                 plateau_count: int) -> CacheLevel:
    notes = []
    latency_ns = math.exp(statistics.median(fit[plateau.first:plateau.base_last + 1])) - offset
    clocks = [clock for size in sizes[plateau.first:plateau.base_last + 1] for clock in clock_by_size.get(size, [])]
    # Interference slows the clock loop as it slows the chase: the fastest clock reading is the robust one.
    cycles = latency_ns * max(clocks) if clocks and not offset else None
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
    onset = completion = confidence = None
    if plateau.first == plateau.last:
        notes.append(f"a level the sweep passes in one point ({sizes[plateau.first]} B) between two rises too "
                     "spread to be one: its latency and capacity are uncertain")
    if is_memory:
        notes.append("memory: no rise after it within the sweep" if plateau.onset is None else
                     f"memory: the curve still rises after it, to {math.exp(fit[-1]) - offset:.3g} ns at {sizes[-1]} B "
                     "(TLB misses or page walks past memory's plateau, not a capacity)")
    elif plateau.onset is not None:
        onset, completion = sizes[plateau.onset], sizes[plateau.completion]
        confidence = ("low" if plateau.first == plateau.last else
                      "high" if plateau.completion == plateau.onset + 1 else "interval")
        if confidence == "interval":
            notes.append(f"the rise spans {math.log2(completion / onset):.3g} octaves over "
                         f"{plateau.completion - plateau.onset} sample steps")
        if not plateau.rise_levels_off:
            notes.append(f"the curve still rises after this step, to {math.exp(fit[-1]) - offset:.3g} ns "
                         f"at {sizes[-1]} B")
    else:
        notes.append(f"the sweep ends on this plateau (largest size {sizes[-1]} B): its capacity lies beyond"
                     if plateau.last == len(sizes) - 1 else
                     "the curve does not rise clearly after this plateau: no capacity")
        if number == plateau_count and not sysfs:
            notes.append("the last plateau of the sweep: memory if the sweep went past every cache")
    return CacheLevel(number, "DRAM" if is_memory else f"L{number}", latency_ns, cycles,
                      sizes[plateau.first], sizes[plateau.last], None, onset, completion, sysfs_size,
                      "; ".join(notes) or None, confidence)


# ---- a level's size from its rise ----------------------------------------------------------------------

@dataclass(frozen=True)
class Placement:
    """How the chase's lines fall on a level's sets: what decides which point of the rise is its capacity.

    contiguous_bytes: the physically contiguous run of the buffer (4 KiB pages: 4096; huge pages granted on bare
    metal: 2 MiB; a guest's huge pages: 4096, as its host may back them with 4 KiB pages). way_spans: each
    stated cache level's size / ways (bytes one way of it spans), smallest level first, None where unknown.
    stated_source: what the stated sizes are, 'sysfs' (a lab host) or 'published' (a reference host's CPU)."""
    contiguous_bytes: int = SMALL_PAGE_BYTES
    way_spans: tuple[int | None, ...] = ()
    stated_source: str = "sysfs"


def placement_of(reading: CurveReading) -> Placement:
    """A curve measured by another tool: its pages, as the user stated them, are its contiguous run."""
    return Placement(reading.page_bytes)


def _onset(fit: Sequence[float], low: float, last: int, completion: int, threshold: float) -> int:
    """Index of the last size from `last` (the plateau's end) on whose fit is within `threshold` (ln) of `low`
    (the level's last flat run): the curve leaves the plateau after it."""
    index = last
    while index + 1 < completion and fit[index + 1] - low <= threshold:
        index += 1
    return index


def _estimator(number: int, placement: Placement) -> tuple[str, str]:
    """Which point of a level's rise is its capacity, and why (docs/methods.md, "Reading a size from a rise")."""
    span = placement.way_spans[number - 1] if number <= len(placement.way_spans) else None
    contiguous = placement.contiguous_bytes
    if span is not None and span <= contiguous:
        return "onset", "its lines fill its sets evenly (way span within a contiguous run): it misses from capacity on"
    if span is None and (number == 1 or contiguous >= HUGE_PAGE_BYTES):
        return "onset", ("an L1 is indexed within a page: its sets fill evenly" if number == 1 else
                         "huge pages fill its sets evenly")
    if number >= 3:
        return "onset", "an L3 or later cache's adaptive or victim replacement rises gradually from its capacity"
    return "set-load", ("its lines fall on its sets at random (way span beyond the contiguous run): sets "
                        "overflow below capacity, and the rise's shape under the set-load model places it")


# The set-load model of a rise whose lines fall on the sets at random (docs/methods.md, "Reading a size from a
# rise"): at S = x * C a W-way cache's sets hold Poisson(x W) of the chase's lines, and a line's own set holds it
# and Poisson(x W) others. With LRU-like replacement a set of more than W lines misses on every access; with random
# replacement a line survives each of the misses between two of its accesses with probability 1 - 1/W, so a set
# of n lines hits with the fixed point h = (1 - 1/W)^((n - 1)(1 - h)). The share of accesses that miss, M(x), is
# the average over the set loads. The rise's shape tells the two apart (random replacement keeps a fifth of a
# cyclic working set twice its size: a long upper tail) and places C: LRU-like M(1) is about 0.55, random 0.2.
SET_MODEL_STEP = 1 / 64          # octaves between two candidate capacities (and two tabulated x)
SET_MODEL_SPAN = 4               # the tables cover x from 2^-4 to 2^4
# A set's load is summed over Poisson(mean) within this many standard deviations (plus as many loads) of its
# mean: the weight outside is below 1e-30, and the whole sum cost 40 W terms at every x, 0.4 s of a CLI
# ingest building the tables of one host's levels.
POISSON_SIGMAS = 12
SET_MODEL_WAYS = 8               # where the host does not say its ways
# the most ways modelled: a set's load spreads by 1/sqrt(x W), 12% at 64 ways, so more ways change the rise less
# than the noise; a host's stated ways are untrusted, and a table costs time and memory in them (40 W set loads)
SET_MODEL_MAX_WAYS = 64
SET_MODEL_POLICIES = ("lru", "random")
EVEN_MODEL_POLICIES = ("lru", "lru4", "random")  # evenly filled sets (a TLB): fully associative or 4-way LRU, random
SHELF_FRACTION = 0.5            # a stretch of a rise that climbs less than this share of its steepest slope: a shelf
SHELF_OCTAVES = 0.75            # ... and that wide at least (three quarter-octave refinement intervals)
SHELF_SLOPE_OCTAVES = 0.25      # the steepest slope is read over this much of the rise at least (a refinement step)
# The set-load fits of the two replacements are told apart when the worse one's squared residuals exceed the better
# one's by this many times the points' variance: twice the log of the likelihood ratio under lognormal noise, 2 is
# odds of e:1, the least that counts as evidence. On 120 simulated machines (quick) it took the L2s shown as a
# number from 98 to 75 and the wrong ones among them from 7 to 3 (4: 71 and 3; 1: 84 and 4; docs/methods.md).
POLICY_EVIDENCE = 2.0
SHARP_RISE_OCTAVES = 0.55        # a rise from its onset to 90% of the step within this filled its sets evenly


def _random_set_misses(lines: int, ways: int) -> float:
    """The share of a cyclic chase's accesses that miss in one random-replacement set holding `lines`."""
    if lines <= ways:
        return 0.0
    if ways == 1:  # direct-mapped: no choice of victim, every other line's miss evicts it (as under LRU)
        return 1.0
    rate, hit = (lines - 1) * -math.log1p(-1 / ways), 0.0
    for _round in range(200):  # the iteration from 0 climbs to the smaller fixed point (h = 1 is the other)
        hit, last = math.exp(-rate * (1 - hit)), hit
        if hit == last:  # reached: every later round gives the same number
            break
    return 1 - hit


_SET_MODEL_TABLES: dict[tuple[int, str], list[float]] = {}


def _set_model(ways: int, policy: str) -> list[float]:
    """M(2^(k * SET_MODEL_STEP - SET_MODEL_SPAN)) for k = 0 .. 2 * SET_MODEL_SPAN / SET_MODEL_STEP."""
    key = (ways, policy)
    if key not in _SET_MODEL_TABLES:
        table, per_set = [], [_random_set_misses(lines, ways) if policy == "random" else float(lines > ways)
                              for lines in range(1, 40 * ways + 1)]
        for k in range(int(2 * SET_MODEL_SPAN / SET_MODEL_STEP) + 1):
            mean = ways * 2 ** (k * SET_MODEL_STEP - SET_MODEL_SPAN)
            # the loads that weigh: within POISSON_SIGMAS standard deviations of the mean (the rest weigh less
            # than 1e-30 together); the first weight in logs (exp(-mean) underflows to 0 past a mean of 745),
            # the others from it by the recurrence
            reach = POISSON_SIGMAS * math.sqrt(mean) + POISSON_SIGMAS
            first, end = max(0, int(mean - reach)), min(len(per_set), int(mean + reach) + 1)
            probability = math.exp(first * math.log(mean) - mean - math.lgamma(first + 1))
            total = 0.0
            for others in range(first, end):
                total += probability * per_set[others]
                probability *= mean / (others + 1)
            table.append(min(1.0, total))
        _SET_MODEL_TABLES[key] = table
    return _SET_MODEL_TABLES[key]


def _even_model(policy: str) -> list[float]:
    """M(x) on the set-model grid for lines that fill the sets evenly (a TLB, indexed by virtual page, under a
    chase of one line per page): none miss up to capacity; past it LRU-like replacement misses every access (a
    cliff; a 4-way one, the least associative, climbs to it over a quarter octave as more of its sets hold a fifth
    line), random replacement of a fully associative TLB keeps a line with probability h = exp(-x (1 - h)), the
    large-ways limit of the set-load fixed point, so a fifth of the accesses miss at 1.1 x its entries and two
    thirds at 1.6 x: a rise that leaves the plateau later than the reach, as far as the points' scatter goes."""
    key = (0, policy)
    if key not in _SET_MODEL_TABLES:
        table = []
        for k in range(int(2 * SET_MODEL_SPAN / SET_MODEL_STEP) + 1):
            x = 2 ** (k * SET_MODEL_STEP - SET_MODEL_SPAN)
            if x <= 1:
                table.append(0.0)
                continue
            if policy == "lru4":  # a fraction of the 4-way sets holds one line more, and all of those miss
                lines = x * 4
                whole = math.floor(lines)
                table.append(1.0 if whole > 4 else (lines - whole) * 5 / lines)
                continue
            hit = 0.0
            for _round in range(200):
                hit = math.exp(-x * (1 - hit))
            table.append(1.0 if policy == "lru" else 1 - hit)
        _SET_MODEL_TABLES[key] = table
    return _SET_MODEL_TABLES[key]


@dataclass(frozen=True)
class SetModelFit:
    """The set-load model's best fit of a rise (log2 of the capacity, the replacement, the sum of squared ln
    residuals) and the best fit of the other replacement(s), nearest first."""
    capacity_log2: float
    policy: str
    squares: float
    others: tuple[tuple[float, float, str], ...]   # (squares, capacity_log2, policy)


def _set_model_fit(log_sizes: Sequence[float], measured_ln: Sequence[float], low_ns: float, high_ns: float,
                   ways: int, even: bool = False) -> SetModelFit:
    """The capacity (log2), and the replacement, whose modelled rise (base `low_ns`, top `high_ns`) is nearest
    the measured points in ln latency (lognormal noise): each policy on a grid of SET_MODEL_STEP octaves.

    The points are summed per cell of that grid once (count, sum of ln latency): a candidate capacity moves the
    model by whole cells, so a cell's squared error needs only its sums, the cells below and above the model's
    table take its ends (prefix sums), and a candidate costs the cells inside the table's span, not the points.
    A cache's rise, and a host's sweep of tens of thousands of points (untrusted input), is searched at every 8th
    candidate first, then every candidate within 8 of the best: the basin of a rise is wider than 1/8 octave (the
    same estimates as every candidate on 640 simulated sweeps, in half ingest's time here). A TLB's short curve
    tries every candidate: searched at every 8th, one of 300 simulated TLB curves settled in another basin."""
    top = int(2 * SET_MODEL_SPAN / SET_MODEL_STEP)
    first, last = min(log_sizes), max(log_sizes)
    sums: dict[int, list[float]] = {}
    for x, y in zip(log_sizes, measured_ln):  # the cell k + step of a point, k as round((x - capacity + SPAN) / STEP)
        cell = sums.setdefault(round((x - first + 1 + SET_MODEL_SPAN) / SET_MODEL_STEP), [0.0, 0.0])
        cell[0] += 1
        cell[1] += y
    squares = sum(y * y for y in measured_ln)  # error() leaves it out: the same for every candidate
    cells = sorted(sums)
    counts, totals = [sums[cell][0] for cell in cells], [sums[cell][1] for cell in cells]
    count_before, total_before = [0.0], [0.0]
    for count, total in zip(counts, totals):
        count_before.append(count_before[-1] + count)
        total_before.append(total_before[-1] + total)
    steps = int((last - first + 2) / SET_MODEL_STEP)
    stride = 8 if not even or len(cells) > 256 else 1
    fits = {}
    for policy in EVEN_MODEL_POLICIES if even else SET_MODEL_POLICIES:
        shares = _even_model(policy) if even else _set_model(ways, policy)
        model = [math.log(low_ns + share * (high_ns - low_ns)) for share in shares]

        def error(step: int) -> float:
            # sum over points of (y - m)^2 less the sum of y^2, the same for every candidate
            below = bisect.bisect_right(cells, step)        # cells whose k <= 0
            above = bisect.bisect_left(cells, step + top)   # cells whose k >= top
            low, high = model[0], model[top]
            value = count_before[below] * low * low - 2 * total_before[below] * low
            value += ((count_before[-1] - count_before[above]) * high * high
                      - 2 * (total_before[-1] - total_before[above]) * high)
            for index in range(below, above):
                level = model[cells[index] - step]
                value += counts[index] * level * level - 2 * totals[index] * level
            return value

        best = min((error(step), step) for step in range(0, steps + 1, stride))
        if stride > 1:
            near = range(max(0, best[1] - stride), min(steps, best[1] + stride) + 1)
            best = min((error(step), step) for step in near)
        fits[policy] = (best[0] + squares, first - 1 + best[1] * SET_MODEL_STEP, policy)
    # the two differ mostly in the upper tail (random replacement still hits a fifth of the time at twice the
    # capacity): at 10% noise a few points there cannot always tell them apart (benchmarks/sweep_accuracy.py)
    chosen, *others = sorted(fits.values())
    return SetModelFit(chosen[1], chosen[2], max(chosen[0], 0.0), tuple(others))


def _shelf(x: Sequence[float], fit: Sequence[float], start: int, end: int, step_ratio: float) -> tuple[int, int] | None:
    """A shelf inside the rise from `start` (a plateau's end) to `end` (the next plateau's start): SHELF_OCTAVES or
    more, from index i to k, where the fit climbs less than SHELF_FRACTION of the rise's steepest slope before it,
    with at least `step_ratio` of rise both before and after it. It is the next level as a guest sees it (a share
    of an L3 that still climbs more than a plateau may, 18% per octave on the dev VM, before memory): this level's
    rise ends there, not in memory. One pass with a pointer moving forward: linear in the rise."""
    gain = math.log(step_ratio)
    steepest, k, j = 0.0, start, start
    for i in range(start + 1, end):
        # the slope over SHELF_SLOPE_OCTAVES at least: on a dense sweep one point's jump (a buffer whose pages
        # happened to crowd a few colours of sets) is not the rise's slope, and measured against it the rest of
        # the rise would read as a shelf
        while j + 1 < i and x[i] - x[j + 1] >= SHELF_SLOPE_OCTAVES - SIZE_ROUNDING_OCTAVES:
            j += 1
        if x[i] - x[j] >= SHELF_SLOPE_OCTAVES - SIZE_ROUNDING_OCTAVES:
            steepest = max(steepest, (fit[i] - fit[j]) / (x[i] - x[j]))
        k = max(k, i + 1)
        while k < end and x[k] - x[i] < SHELF_OCTAVES - SIZE_ROUNDING_OCTAVES:
            k += 1
        if k >= end or x[k] - x[i] < SHELF_OCTAVES - SIZE_ROUNDING_OCTAVES:
            return None
        if (fit[i] - fit[start] >= gain and fit[end] - fit[k] >= gain
                and (fit[k] - fit[i]) / (x[k] - x[i]) < SHELF_FRACTION * steepest):
            return i, k
    return None


def _sized(level: CacheLevel, plateau: Plateau, following: Plateau | None, sizes: list[int], fit: list[float],
           measured_ln: list[float], placement: Placement, stated: list[int], is_last_cache: bool,
           scatter: float) -> tuple[CacheLevel, LevelBrackets | None]:
    """The level with its size bracket, best estimate and method, and both candidate brackets (refinement).
    The level's latency is the median of the points measured on its last flat run (`measured_ln`, ln; the
    fit of a noisy plateau sits on its lowest points), and the curve leaves it where the fit is more than
    SUPPORT_RATIO, or NOISE_STEP_FACTOR x the points' `scatter` (ln), above that: a noisy point does not
    start a rise."""
    if plateau.onset is None or level.level == "DRAM":
        return level, None
    if following is not None and following.first < following.last:
        # the next level as its first flat run ends: a hand-over whose lines fall at random still hits the level
        # below now and then at the start of the next plateau (a TLB step after it is a run of its own)
        top = following.base_last
        # the next level's latency as its own plateau gives it (the median of its first flat run's points), not
        # the fit where that run ends: a TLB step there would stretch this level's rise
        high = statistics.median(measured_ln[following.first:following.base_last + 1])
    else:  # no clean level after it (a level on one point, or none): the top of this level's own steep part
        end = following.first if following is not None else plateau.completion
        top = _steep_part([math.log2(size) for size in sizes], fit, plateau.last, end)
        high = fit[top]
    last_run = plateau.steps[-1][1] if plateau.steps else plateau.first
    window_end = max(top, plateau.completion)
    shelf = _shelf([math.log2(size) for size in sizes], fit, plateau.last,
                   following.first if following is not None else plateau.completion, TUNING.level_step_ratio)
    if shelf is not None:
        # the rise ends at the shelf: this level hands over to the shelf's latency, not to memory's beyond it
        top = window_end = shelf[0]
        high = statistics.median(measured_ln[shelf[0]:shelf[1] + 1])
    base = statistics.median(measured_ln[last_run:plateau.last + 1])
    # the modelled rise starts from where the plateau ends: a level whose latency still creeps up (TLB misses
    # growing with the pages touched) starts its own step there, not where its plateau began
    start = max(base, fit[plateau.last])
    onset = _onset(fit, base, plateau.last, plateau.completion, max(math.log(SUPPORT_RATIO), NOISE_STEP_FACTOR * scatter))
    estimator, why = _estimator(level.level_index, placement)
    notes = [level.note] if level.note else []
    number = level.level_index
    own = stated[number - 1] if number <= len(stated) else None
    # the set-load model: the points from the level's last flat run to the next level's, against each
    # replacement's modelled rise from this level's latency to the next's; its capacity inside two measured sizes
    span = placement.way_spans[number - 1] if number <= len(placement.way_spans) else None
    ways = min(max(1, round(own / span)), SET_MODEL_MAX_WAYS) if own and span else SET_MODEL_WAYS
    window = range(last_run, window_end + 1)
    fitted = _set_model_fit([math.log2(sizes[index]) for index in window],
                            [measured_ln[index] for index in window], math.exp(start), math.exp(high), ways)
    policy = fitted.policy
    # whatever the replacement, the capacity lies between the rise's onset and where the curve has covered 90% of
    # the step (LRU-like: about half missing at C; random: a fifth)
    done = math.exp(start) + 0.9 * (math.exp(high) - math.exp(start))
    finished = next((index for index in window if index > onset and math.exp(measured_ln[index]) >= done), window[-1])

    def within(capacity_log2: float) -> tuple[float, tuple[int, int]]:
        """A capacity held between the onset and the 90% point, and the two measured sizes around it."""
        capacity = min(max(2 ** capacity_log2, sizes[onset]), sizes[max(finished, onset + 1)])
        inside = min(max(bisect.bisect_right(sizes, capacity) - 1, onset), max(finished - 1, onset), len(sizes) - 2)
        return capacity, (sizes[inside], sizes[inside + 1])

    model, estimator_bracket = within(fitted.capacity_log2)
    # The two replacements read one rise half an octave apart (random at the smaller capacity), and after that
    # shift their rises differ by only 3-5% of ln latency (docs/methods.md): where the points' scatter leaves the
    # worse fit within POLICY_EVIDENCE of the better, the curve has not told which it is, and the bracket spans
    # both readings (too wide for a number) rather than print the nearer fit's capacity as if it were known.
    other_squares, other_log2, _other_policy = fitted.others[0]
    variance = max(scatter * scatter, fitted.squares / max(1, len(window) - 2), 1e-12)
    decided = other_squares - fitted.squares >= POLICY_EVIDENCE * variance
    if not decided:
        other_bracket = within(other_log2)[1]
        estimator_bracket = (min(estimator_bracket[0], other_bracket[0]), max(estimator_bracket[1], other_bracket[1]))
    if estimator == "set-load" and math.log2(sizes[max(finished, onset + 1)] / sizes[onset]) <= SHARP_RISE_OCTAVES:
        # lines falling at random take more than an octave from 10% to 90% of the step (16 ways: 0.95; 8: 1.2):
        # a rise this sharp filled its sets evenly after all (the host gave contiguous memory), read at its onset
        estimator, why = "onset", (f"its rise, {math.log2(sizes[max(finished, onset + 1)] / sizes[onset]):.2g} "
                                   "octave from its onset to 90% of the step, is sharper than lines falling at "
                                   "random allow: its sets filled evenly")
    low, upper = (sizes[onset], sizes[onset + 1]) if estimator == "onset" else estimator_bracket
    # inside its bracket: the onset at the middle (the rise's shape there depends on the replacement), the set
    # load at the model's capacity
    measured = log_midpoint(low, upper) if estimator == "onset" else min(max(model, low), upper)
    if estimator == "set-load" and decided:
        why += f" (its rise fits {'random' if policy == 'random' else 'LRU-like'} replacement)"
    elif estimator == "set-load":
        why += (" (its rise fits LRU-like and random replacement alike within its points' scatter: the bracket "
                "spans both readings)")
    brackets = LevelBrackets(level.level, (sizes[onset], sizes[onset + 1]), estimator_bracket, estimator, measured)
    exclusive = stated[number - 2] + own if is_last_cache and own and number >= 2 else None
    if own is not None and low <= own <= upper:
        estimate, method = own, placement.stated_source
    elif exclusive is not None and low <= exclusive <= upper:
        estimate, method = exclusive, placement.stated_source
        from fleetscope.units import format_bytes

        notes.append(f"an exclusive (victim) last-level cache: the chase reaches L{number - 1} + L{number} = "
                     f"{format_bytes(exclusive)} before memory")
    elif plateau.first == plateau.last:
        # a level the sweep passes in one point (a guest's LLC share between two spread rises): its rise's onset
        # is where that point ends, not a size the level has - the bracket alone is shown, never a number
        estimate = method = None
        notes.append("its size is the bracket alone")
    elif math.log2(upper / low) <= RESOLVED_OCTAVES:
        estimate, method = round(measured), estimator
    else:
        estimate = method = None
        from fleetscope.units import format_size

        octaves = f"{math.log2(upper / low):.2g}"
        notes.append(f"size bracket {format_size(low, upper)} at the rise's {estimator} ({why}): "
                     f"{octaves} octave{'' if octaves == '1' else 's'} wide, too coarse for a number")
    return replace(level, capacity_bytes=estimate, size_low_bytes=low, size_high_bytes=upper,
                   size_estimator=estimator, size_method=method, note="; ".join(notes) or None), brackets


# ---- TLB -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TlbLevels:
    """TLB reach from a translation-cost curve (pages touched, one line each)."""
    pages: list[int]
    fitted_ns: list[float]               # fitted latency as an L1-resident chain would see it
    l1_entries: int | None               # log-midpoint of the first step's onset bracket, where resolved
    l1_onset_pages: int | None           # the first step: [onset, completion]
    l1_completion_pages: int | None
    l1_miss_ns: float | None             # the plateau after the first step, above the first plateau: an L2 TLB hit
    l2_entries: int | None
    l2_onset_pages: int | None
    l2_completion_pages: int | None
    walk_ns: float | None                # after the second step, above the first plateau: a page walk
    note: str | None
    l1_low_pages: int | None = None      # the entries bracket: the last page count on the plateau and the next
    l1_high_pages: int | None = None
    l2_low_pages: int | None = None
    l2_high_pages: int | None = None
    # (low, high): a second step seen on the curve's last point alone, which reads no L2 TLB (method 15) but is
    # where a refinement round looks for one
    last_point_rise_pages: tuple[int, int] | None = None


def _control_steps(pages: Sequence[int], control_ns: Sequence[float]) -> list[tuple[int, int]]:
    """Where the control chain (the TLB chain's lines packed on few pages) itself steps up a data cache level, as
    (last page count before, first after): each rise past CONTROL_STEP_RATIO x the level it last stepped to."""
    ordered, values = per_size_minimum(pages, control_ns)
    steps, level = [], values[0]
    for index in range(1, len(values)):
        if values[index] > level * CONTROL_STEP_RATIO:
            steps.append((ordered[index - 1], ordered[index]))
            level = values[index]
    return steps


def infer_tlb(pages: Sequence[int], latency_ns: Sequence[float], *,
              weights: Sequence[float] | None = None, control_ns: Sequence[float] | None = None) -> TlbLevels:
    """TLB L1/L2 entries and the page-walk cost from ns per access vs pages touched.

    `latency_ns` is what a chain whose lines all hit L1 would take per access: the control chain's L1
    latency plus the paired TLB-minus-control difference (the warehouse), or a plain TLB sweep (a CSV).
    Costs are reported above the first plateau. `weights` (1/std^2) weight the least-squares fit.
    `control_ns`, the control chain's own ns per access at the same page counts where it was measured: a
    second step where the control chain leaves a data cache level is not read as an L2 TLB (method 17).
    """
    control_steps = _control_steps(pages, control_ns) if control_ns is not None else []
    ordered, values = per_size_minimum(pages, latency_ns)
    _check_curve(ordered, values, "TLB curve")
    if weights is not None:
        by_pages = dict(zip(pages, weights))
        weights = [by_pages[count] for count in ordered]
    x = [math.log2(count) for count in ordered]
    y = [math.log(value) for value in values]
    fit = isotonic_fit(y, weights)
    # Every step of a TLB curve is a TLB level, however small (a miss that hits the L2 TLB may add only
    # ~1 ns): the smallest step is set by the points' scatter, not by a ratio between cache levels.
    step = max(math.log(SUPPORT_RATIO), NOISE_STEP_FACTOR * _neighbour_scatter(y))
    runs = _flat_runs(x, fit, min(FLAT_SLOPE, step))  # a step as small as that in one octave is a rise
    plateaus = _with_rises(x, fit, _group_runs(fit, runs, math.exp(step)), math.exp(step))
    notes = []
    if step > math.log(SUPPORT_RATIO):
        notes.append(f"the points scatter around the fit: steps smaller than {math.expm1(step):.0%} cannot be "
                     "told from that noise")
    fitted_ns = [math.exp(value) for value in fit]
    if not plateaus:
        return TlbLevels(list(ordered), fitted_ns, None, None, None, None, None, None, None, None,
                         "no plateau in the curve: no TLB level can be read from it")
    base = math.exp(statistics.median(fit[plateaus[0].first:plateaus[0].last + 1]))
    if plateaus[0].first > 0:
        notes.append(f"the curve rises before its first plateau (at {ordered[0]} pages): that may not be the L1 TLB")

    # A TLB is indexed by virtual page: one line per page fills its sets evenly, so whatever its replacement it
    # misses from its reach on, and the step's onset is its entries (docs/methods.md, "Reading a size from a rise").
    # A step starts where the fit leaves the plateau's measured level (the median of its last flat run's points)
    # by more than the smallest step the points' scatter allows: a noisy point does not start it.
    smallest = max(math.log(SUPPORT_RATIO), NOISE_STEP_FACTOR * _neighbour_scatter(y))

    def step(plateau: Plateau | None) -> tuple[int | None, ...]:
        if plateau is None or plateau.onset is None:
            return None, None, None, None, None
        last_run = plateau.steps[-1][1] if plateau.steps else plateau.first
        level = statistics.median(y[last_run:plateau.last + 1])
        onset = _onset(fit, level, plateau.last, plateau.completion, smallest)
        # The onset is where the rise stands out of the scatter: a random-replacement TLB's rise is gentle at its
        # foot (a fifth missing at 1.1 x its entries), so that lies past the reach. Both replacements' rises are
        # fitted from the plateau to the next level (as a cache's set load, with evenly filled sets) and the reach
        # is read where the better one puts it: at or after the plateau's last point, before the first point that
        # stands out (_even_model).
        following = plateaus[plateaus.index(plateau) + 1] if plateau is not plateaus[-1] else None
        top = following.base_last if following is not None and following.first < following.last else plateau.completion
        high_ns = math.exp(statistics.median(y[following.first:top + 1]) if following is not None
                           and following.first < following.last else fit[top])
        window = range(last_run, top + 1)

        # A cliff: from at most a quarter of the step to nine tenths of it between two points at most half an octave
        # apart. No random TLB rises so fast (a tenth to nine tenths takes it more than an octave, _even_model), so
        # the reach lies between those two points whatever foot the curve shows below them: the dev VM's 72-entry
        # DTLB read 9% of its step at 64 pages and all of it at 76, and a random fit put that foot's start, 53-64.
        def share(index: int) -> float:
            return (fitted_ns[index] - math.exp(level)) / max(high_ns - math.exp(level), 1e-9)

        full = next((index for index in window if index > last_run and share(index) >= 0.9), None)
        if full is not None and share(full - 1) <= 0.25 and x[full] - x[full - 1] <= 0.5:
            low, high = ordered[full - 1], ordered[full]
            entries = round(log_midpoint(low, high)) if math.log2(high / low) <= RESOLVED_OCTAVES else None
            return entries, ordered[plateau.onset], ordered[plateau.completion], low, high
        fitted = _set_model_fit([x[index] for index in window], [y[index] for index in window],
                                math.exp(level), high_ns, 1, even=True)
        reach_log2, policy = fitted.capacity_log2, fitted.policy
        # only a random TLB's foot hides in the scatter: under an LRU-like fit a point within the scatter of the
        # plateau is on it (a noisy high point there would otherwise pull a 4-way ramp below it)
        floor = plateau.last if policy == "random" else onset
        lowest = ordered[floor]
        if policy == "random":
            # and no further below the onset's point than the misses the scatter can hide there allow: the share
            # of the step the threshold is, read back through the random TLB's rise
            hidden = math.expm1(smallest) * math.exp(level) / max(high_ns - math.exp(level), 1e-9)
            table = _even_model("random")
            k = next((k for k, share in enumerate(table) if share >= hidden), len(table) - 1)
            lowest = max(lowest, ordered[onset] / 2 ** (k * SET_MODEL_STEP - SET_MODEL_SPAN))
        reach = min(max(2 ** reach_log2, lowest), ordered[onset + 1])
        # (the fit places a point in cells of SET_MODEL_STEP: a reach within one cell of a point is that point)
        inside = min(max(bisect.bisect_right(ordered, reach * 2 ** SET_MODEL_STEP) - 1, floor), onset)
        low, high = ordered[inside], ordered[inside + 1]
        entries = round(log_midpoint(low, high)) if math.log2(high / low) <= RESOLVED_OCTAVES else None
        return entries, ordered[plateau.onset], ordered[plateau.completion], low, high

    first = plateaus[0]
    second = plateaus[1] if len(plateaus) > 1 else None
    l1_entries, l1_onset, l1_completion, l1_low, l1_high = step(first)
    l2_plateau = second
    l2_entries, l2_onset, l2_completion, l2_low, l2_high = step(l2_plateau)
    confounded = next(((low, high) for low, high in control_steps
                       if l2_low is not None and low < l2_high and l2_low < high), None)
    if confounded is not None:
        # The TLB chain's lines (one per page) outgrow a data cache where the control chain's do (as many lines,
        # packed): the two chains' difference can move there with no TLB level at all, as what a translation costs
        # changes with the cache the line comes from. A Zen 4 guest's quick curve stepped 0.45 ns from 512 to 608
        # pages, where 512 lines fill its 32 KiB L1d, and levelled off: method 16 read it as a 558-entry L2 TLB
        # (3,072). The L2 TLB is read from the next step, where the curve shows one.
        notes.append(f"the step from {l2_low} to {l2_high} pages is where the control chain leaves a data cache "
                     f"({confounded[0]} to {confounded[1]} lines): a translation cost that changes with the cache "
                     "its lines come from, not a TLB's reach, so no L2 TLB is read from it")
        l2_plateau = plateaus[2] if len(plateaus) > 2 else None
        l2_entries, l2_onset, l2_completion, l2_low, l2_high = step(l2_plateau)
    last_point_rise = None
    if l2_low is not None and l2_low == ordered[-2] and l2_high == ordered[-1]:
        # The second step rises on the curve's last point alone: nothing past it shows the rise is a TLB's step
        # (one that levels off at a walk) rather than the foot of a larger one, or lines that spill out of the L1
        # data cache as pages add them (an Emerald Rapids guest's quick curve, cut to 512 pages by the budget,
        # rose 1 ns there, a quarter of its 2,048-entry STLB). No L2 TLB is read from it (method 15).
        notes.append(f"the curve rises {fitted_ns[-1] - fitted_ns[-2]:.2g} ns at its last point ({ordered[-1]} "
                     f"pages) alone: an L2 TLB step past {ordered[-2]} pages cannot be told from a rise that goes "
                     "on, so no L2 TLB is read; an L2 TLB of more entries than the curve's pages is beyond its reach")
        last_point_rise = (l2_low, l2_high)
        l2_entries = l2_onset = l2_completion = l2_low = l2_high = None
    for name, entries, low, high in (("L1", l1_entries, l1_low, l1_high), ("L2", l2_entries, l2_low, l2_high)):
        if low is not None and entries is None:
            notes.append(f"{name} TLB step from {low} to {high} pages: {math.log2(high / low):.2g} octaves, too "
                         "coarse for a count")
    l1_miss_ns = walk_ns = None
    if second is not None:
        l1_miss_ns = math.exp(statistics.median(fit[second.first:second.last + 1])) - base
    elif l1_low is not None:
        notes.append("one step only: no plateau after it, so no L2 TLB level")
    if l1_low is None:
        notes.append(f"no step after the first plateau (up to {ordered[-1]} pages): the sweep stays in the L1 TLB")
    if l2_low is not None:
        walk_ns = fitted_ns[l2_plateau.completion] - base
        after = plateaus.index(l2_plateau) + 1
        if len(plateaus) > after:
            walk_ns = math.exp(statistics.median(fit[plateaus[after].first:plateaus[after].last + 1])) - base
        elif not l2_plateau.rise_levels_off:
            notes.append(f"page-walk cost taken where the L2 TLB's step ends ({ordered[l2_plateau.completion]} pages); "
                         f"it keeps growing to {fitted_ns[-1] - base:.3g} ns at {ordered[-1]} pages as page "
                         "tables spill out of the caches")
    elif second is not None and second.onset is None:
        notes.append(f"no second step up to {ordered[-1]} pages: the cost after the first step is an L2 TLB hit, "
                     "or a page walk where this page size has no L2 TLB level")
    return TlbLevels(list(ordered), fitted_ns, l1_entries, l1_onset, l1_completion, l1_miss_ns,
                     l2_entries, l2_onset, l2_completion, walk_ns, "; ".join(notes) or None,
                     l1_low, l1_high, l2_low, l2_high, last_point_rise)


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

# A knee is where queueing makes latency climb; a curve whose latency at saturation never rises this many times
# its idle latency has none to find. Every loaded-latency ladder of tests/fixtures/mlc_samples that reaches DRAM's
# saturation rises 1.45x (Denverton) to 5.1x (Comet Lake) there; the flat curves of busy 2-vCPU guests stay under
# 1.25x at their saturated end, though single points spike higher.
KNEE_MIN_RISE = 1.3
SATURATED_SHARE = 0.9   # the saturated end of a ladder: its points within 10% of the peak bandwidth


@dataclass(frozen=True)
class LoadedLatency:
    points: int
    idle_latency_ns: float | None          # the no-load point where the curve has one, else the lightest load
    peak_bandwidth_gb_s: float | None
    knee_bandwidth_gb_s: float | None      # Kneedle's point
    knee_latency_ns: float | None
    doubling_bandwidth_gb_s: float | None  # where latency first reaches twice idle (interpolated)
    knee_outstanding_lines: float | None   # Little's law at the knee: bandwidth / 64 B x latency
    note: str | None
    knee_low_gb_s: float | None = None     # the knee lies in [low, high]: the next bandwidths below and above it
    knee_high_gb_s: float | None = None
    saturated_latency_ns: float | None = None  # median latency at >= 90% of the peak bandwidth: the rise over idle
    idle_source: str | None = None         # 'no-load point' | 'lightest load'


def kneedle_index(x: Sequence[float], y: Sequence[float]) -> int | None:
    """Kneedle (Satopaa et al. 2011) on a convex increasing curve: the point farthest below the chord
    of the normalized curve. None when the curve has no spread to normalize."""
    x_low, x_high, y_low, y_high = min(x), max(x), min(y), max(y)
    if x_high == x_low or y_high == y_low:
        return None
    difference = [(xi - x_low) / (x_high - x_low) - (yi - y_low) / (y_high - y_low) for xi, yi in zip(x, y)]
    best = max(range(len(x)), key=difference.__getitem__)
    return best if difference[best] > 0 else None


def infer_loaded_latency(bandwidth_gb_s: Sequence[float], latency_ns: Sequence[float],
                         idle_ns: float | None = None) -> LoadedLatency:
    """Idle latency, peak bandwidth, knee, doubling point and Little's-law lines in flight from
    (bandwidth, latency) pairs of a loaded-latency ladder, in any order. `idle_ns` is the latency with no
    load at all (the loaded_latency kernel's idle point); without it the lightest load stands for idle.

    A knee is named only where the latency at saturation (the median over the points within 10% of the peak
    bandwidth, so that one spike at light load does not count as a rise) is at least KNEE_MIN_RISE x idle: on a
    curve that stays flat Kneedle still finds a 'farthest point', which is noise. The knee is given as the bandwidth interval from
    the ladder's next bandwidth below Kneedle's point to its next one above (the ladder cannot place it
    closer)."""
    pairs = sorted((latency, bandwidth) for bandwidth, latency in zip(bandwidth_gb_s, latency_ns)
                   if bandwidth is not None and latency is not None and bandwidth > 0 and latency > 0)
    if len(pairs) < 3:
        return LoadedLatency(len(pairs), idle_ns, None, None, None, None, None,
                             f"{len(pairs)} usable (bandwidth, latency) pairs: need three or more",
                             idle_source="no-load point" if idle_ns else None)
    # Latency grows with load while bandwidth may fall back past saturation: order by latency (load).
    latency = [pair[0] for pair in pairs]
    bandwidth = [pair[1] for pair in pairs]
    if idle_ns is not None and idle_ns > 0:
        idle, idle_source = idle_ns, "no-load point"
    else:
        idle, idle_source = latency[min(range(len(pairs)), key=bandwidth.__getitem__)], "lightest load"
    highest = max(latency)
    saturated = statistics.median(ns for ns, gb_s in pairs if gb_s >= SATURATED_SHARE * max(bandwidth))
    notes = []
    knee = kneedle_index(bandwidth, latency) if saturated >= KNEE_MIN_RISE * idle else None
    knee_bw = knee_lat = lines = low = high = None
    if saturated < KNEE_MIN_RISE * idle:
        notes.append(f"no knee: latency at saturation (within {1 - SATURATED_SHARE:.0%} of the peak bandwidth) is "
                     f"{saturated / idle:.2f} x idle ({saturated:.4g} ns vs {idle:.4g} ns, {idle_source}); a knee "
                     f"needs {KNEE_MIN_RISE:g} x")
    elif knee is None:
        notes.append("no knee: the curve does not bend")
    else:
        knee_bw, knee_lat = bandwidth[knee], latency[knee]
        low = max((value for value in bandwidth if value < knee_bw), default=knee_bw)
        high = min((value for value in bandwidth if value > knee_bw), default=knee_bw)
        lines = knee_bw * 1e9 / LINE_BYTES * knee_lat * 1e-9
    doubling = None
    for index in range(len(pairs)):
        if latency[index] >= 2 * idle:
            if index == 0:
                doubling = bandwidth[0]
                break
            previous = index - 1
            share = (2 * idle - latency[previous]) / (latency[index] - latency[previous])
            doubling = bandwidth[previous] + share * (bandwidth[index] - bandwidth[previous])
            break
    if doubling is None:
        notes.append(f"latency never doubles (largest {highest:.4g} ns vs idle {idle:.4g} ns)")
    return LoadedLatency(len(pairs), idle, max(bandwidth), knee_bw, knee_lat, doubling, lines,
                         "; ".join(notes) or None, low, high, saturated, idle_source)


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
    rates = [rate for rate, _unused in pairs]
    if max(rates) == min(rates):
        return AmatFit(None, None, None, "every point has the same miss rate: no slope to fit")
    times = [time for _unused, time in pairs]
    slope, intercept = statistics.linear_regression(rates, times)
    mean_time = statistics.fmean(times)
    total = sum((time - mean_time) ** 2 for time in times)
    residual = sum((time - intercept - slope * rate) ** 2 for rate, time in pairs)
    return AmatFit(intercept, slope, 1 - residual / total if total else None, None)
