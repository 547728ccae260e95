"""What the core_clock experiment's points say: the turbo curve of each instruction class (the clock as cores
wake, and whether it moves at all) and the ramp from idle to the top clock.

The kernel measures a clock as dependent adds per ns of each thread's own CPU time (kernels/include/peak.h),
so time another process or the hypervisor took is not in it; what it cannot hide is a slice the thread ran
too little of to count, which the ramp leaves out (RAMP_MIN_SHARE). A curve that moves less than
FLAT_TOLERANCE over all its steps is called flat and the reading says so (a VM or a fixed-frequency part
shows no turbo curve); a reading never invents a step or a ramp its points do not show.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

# A clock within this share of the one-core clock is the same clock (the dev VM's steps differ by ~1%).
FLAT_TOLERANCE = 0.03
# The ramp is over once every later slice is at least this share of the top clock.
RAMP_REACHED = 0.95
# A ramp slice counts only when its thread ran at least this share of it (a shorter run says little).
RAMP_MIN_SHARE = 0.9
# A ramp needs this many slices that count, and its top clock is the median of their last third.
RAMP_MIN_SLICES = 10
# The last third of the slices is the top clock only if its second half is within this share of its first.
RAMP_SETTLED = 0.02
# The ramp ends at the first slice where the median of the slices centred on it reaches RAMP_REACHED x the top.
RAMP_WINDOW = 5


@dataclass(frozen=True)
class TurboReading:
    one_core_ghz: float | None
    all_cores_ghz: float | None
    max_active_cores: int | None
    drop: float | None            # 1 - all cores / one core: the share of the clock lost as every core wakes
    flat: bool | None             # every step within FLAT_TOLERANCE of the one-core clock
    steps: str | None             # the active-core counts where the clock fell by more than the tolerance
    note: str | None


def infer_turbo(active_cores: Sequence[int], ghz: Sequence[float | None]) -> TurboReading:
    """The turbo curve of one class from its (active cores, clock) points."""
    points = sorted((cores, value) for cores, value in zip(active_cores, ghz) if value is not None and value > 0)
    if not points:
        return TurboReading(None, None, None, None, None, None, "no clock was measured for this class")
    by_cores = dict(points)
    one = by_cores.get(1)
    top_cores, all_cores = points[-1]
    if one is None:
        return TurboReading(None, all_cores, top_cores, None, None, None,
                            "no one-core point: the curve has no reference to fall from")
    if len(points) == 1:
        return TurboReading(one, one, 1, 0.0, None, None, "one active-core count only: no curve")
    falls, previous = [], one
    for cores, value in points[1:]:
        if value < previous * (1 - FLAT_TOLERANCE):
            falls.append(f"{cores} cores: {value:.3g} GHz")
        previous = value
    flat = all(abs(value / one - 1) <= FLAT_TOLERANCE for _cores, value in points)
    drop = 1 - all_cores / one
    if flat:
        note = (f"flat: within {FLAT_TOLERANCE:.0%} of {one:.3g} GHz from 1 to {top_cores} active cores "
                "(no turbo curve: a VM, a fixed clock, or turbo off)")
    elif falls:
        note = f"the clock falls as cores wake: {drop:.1%} lower with {top_cores} cores active than with one"
    else:
        note = f"{drop:+.1%} from 1 to {top_cores} cores, in steps each within {FLAT_TOLERANCE:.0%}"
    return TurboReading(one, all_cores, top_cores, drop, flat, "; ".join(falls) or None, note)


@dataclass(frozen=True)
class RampReading:
    # ramp_ms: from the end of the idle sleep to the start of the first slice from which the clock is near its top
    # (the median of RAMP_WINDOW slices centred on it at RAMP_REACHED of it)
    ramp_ms: float | None
    idle_ghz: float | None        # the median of the first slices that count: the clock the core woke at
    top_ghz: float | None         # the median of the last third of the slices that count
    slices: int
    slices_left_out: int          # slices the thread ran less than RAMP_MIN_SHARE of
    slice_ms: float | None        # the median slice: the reading's resolution
    flat: bool | None             # at its top clock from the first slice
    note: str | None


def infer_ramp(end_us: Sequence[float], ghz: Sequence[float], shares: Sequence[float | None]) -> RampReading:
    """The ramp of one run of the scalar ruler after idle: slices in time order (their end, µs after the
    ruler started; their clock; the share of the slice the thread ran)."""
    slices = list(zip(end_us, ghz, shares))
    kept = [(end, value) for end, value, share in slices
            if value is not None and value > 0 and (share is None or share >= RAMP_MIN_SHARE)]
    left_out = len(slices) - len(kept)
    if len(kept) < RAMP_MIN_SLICES:
        return RampReading(None, None, None, len(slices), left_out, None, None,
                           f"{len(kept)} of {len(slices)} slices ran at least {RAMP_MIN_SHARE:.0%} of their time "
                           f"(at least {RAMP_MIN_SLICES} are needed): the machine was too busy to read a ramp")
    starts = [0.0, *(end for end, _value in kept[:-1])]
    lengths = [later - earlier for earlier, later in zip([0.0, *end_us[:-1]], end_us)]
    slice_ms = statistics.median(lengths) / 1000
    values = [value for _end, value in kept]
    tail = values[-max(2, len(values) // 3):]
    top = statistics.median(tail)
    if statistics.median(tail[len(tail) // 2:]) > statistics.median(tail[:len(tail) // 2]) * (1 + RAMP_SETTLED):
        return RampReading(None, values[0], top, len(slices), left_out, slice_ms, False,
                           "the clock was still rising in the last third of the slices (still below its top at "
                           "the end): lengthen the ramp")
    # the first slice where the clock is up: the median of the RAMP_WINDOW slices centred on it reaches the
    # threshold (one slice an interrupt slowed, after the ramp, does not move the end; a step is found at
    # the slice it happened in)
    half = RAMP_WINDOW // 2
    reached = next((index for index in range(len(values) - half)
                    if statistics.median(values[max(0, index - half):index + half + 1]) >= RAMP_REACHED * top), None)
    woke = statistics.median(values[:half + 1])  # the first slices: one an interrupt slowed does not set it
    if reached is None:
        return RampReading(None, woke, top, len(slices), left_out, slice_ms, False,
                           "the clock was still below its top at the end: lengthen the ramp")
    if reached == 0:
        return RampReading(0.0, woke, top, len(slices), left_out, slice_ms, True,
                           f"flat: the first slices at {woke / top:.0%} of the top clock (a ramp shorter than one "
                           f"{slice_ms:.2g} ms slice, or none: a VM or a fixed clock)")
    ramp_ms = starts[reached] / 1000
    return RampReading(ramp_ms, woke, top, len(slices), left_out, slice_ms, False,
                       f"from {woke:.3g} GHz after idle to {RAMP_REACHED:.0%} of {top:.3g} GHz in {ramp_ms:.3g} ms")
