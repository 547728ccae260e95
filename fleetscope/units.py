"""Numbers for people: the one place that turns a measured value into the text a page shows.

Sizes are IEC (32 KiB, 1.5 MiB); times pick ns, µs, ms or s by magnitude; rates are MB/s or GB/s
(1e6 / 1e9 B/s); operation rates are IOPS, k IOPS or M IOPS; counts are exact with thousands separators.
No function here ever writes scientific notation.

A table and its chart must show a quantity in the same unit, so a page chooses one unit per quantity
for a whole section (`choose_unit`, from the magnitude of the values the section shows) and formats
every cell and draws every axis of that section in it (`Unit.scaled`, `Unit.text`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_BYTE_UNITS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
_MAX_DECIMALS = 4
NOT_FINITE = "—"  # what a page shows for a number that is not one (never "inf", "nan" or "inf ns")


def format_number(value: float | int | None, digits: int = 3) -> str:
    """About `digits` significant digits in plain decimal notation: 83.2, 4.21, 0.0842, 1,235.

    Values of 100 and more are rounded to whole numbers; below that at most four decimals are kept,
    so a value that is zero for any reading purpose prints as 0 rather than as 8.8e-05 or -0. A value
    that is not finite (an overflow where a page derives from what a host sent) prints as NOT_FINITE.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not math.isfinite(value):
        return NOT_FINITE
    if abs(value) >= 100 or value == int(value) and abs(value) >= 1:
        return f"{round(value) + 0:,}"
    magnitude = math.floor(math.log10(abs(value))) if value else 0
    decimals = min(_MAX_DECIMALS, max(0, digits - 1 - magnitude))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_count(value: int | float | None) -> str:
    """16384 -> '16,384'."""
    return "" if value is None else f"{round(value):,}"


def format_percent(fraction: float | None) -> str:
    """0.975 -> '97.5%'; 1 -> '100%'."""
    return "" if fraction is None else f"{format_number(100 * fraction)}%"


def format_bytes(value: object) -> str:
    """1048576 -> '1 MiB', 46341 -> '45.25 KiB' (sizes keep four significant digits: they are exact, and
    often a power of two apart); anything that is not a number is shown as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "" if value is None else str(value)
    for factor, unit in _BYTE_UNITS:
        if abs(value) >= factor:
            return f"{format_number(value / factor, digits=4)} {unit}"
    return f"{format_number(value, digits=4)} B"


def _bracket_decimals(low: float, high: float) -> int:
    """Decimals that show a bracket from `low` to `high` (in its display unit) to its real precision: a step of at
    most half its width, so the two ends differ and no digit claims more than the bracket knows, and two
    significant digits of its low end at least, which is a size the sweep measured (at one decimal, 0.19 and 0.25
    MiB both read 0.2: 192 KiB-1 MiB and 256 KiB-1 MiB printed alike, and 5.66-8 MiB as 6-8)."""
    width = high - low
    decimals = max(0, math.ceil(-math.log10(width / 2))) if width > 0 else 0
    return max(decimals, 1 - math.floor(math.log10(low))) if low > 0 else decimals


def _fixed(value: float, decimals: int) -> str:
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_size(low: float | None, high: float | None, estimate: float | None = None,
                method: str | None = None) -> str:
    """A size measured as a bracket, with its best estimate and how it was chosen, to the precision the bracket
    has: (32768, 35734, 32768, 'sysfs') -> '32–35 KiB · sysfs 32 KiB'; (1048576, 1143480, 1094928, 'set-load')
    -> '1–1.09 MiB · set-load 1.04 MiB'; a coarse curve without an estimate (32768, 65536) -> '32–64 KiB'.
    A stated size (sysfs, published) is exact and keeps format_bytes' digits; an estimate read from the bracket
    gets the bracket's. Without a bracket: the estimate alone, or ''."""
    bracket, best = size_parts_text(low, high, estimate, method)
    return f"{bracket} · {best}" if bracket and best else bracket or best or ""


def size_parts_text(low: float | None, high: float | None, estimate: float | None = None,
                    method: str | None = None) -> tuple[str | None, str | None]:
    """format_size's two parts, for a page that sets them on two lines: ('32–35 KiB', 'sysfs 32 KiB')."""
    if low is None or high is None:
        return None, (format_bytes(estimate) if estimate is not None else None)
    factor, symbol = next(((factor, unit) for factor, unit in _BYTE_UNITS if high >= factor), (1, "B"))
    decimals = _bracket_decimals(low / factor, high / factor)
    bracket = f"{_fixed(low / factor, decimals)}–{_fixed(high / factor, decimals)} {symbol}"
    if estimate is None or method is None:
        return bracket, None
    if method in ("onset", "set-load"):
        return bracket, f"{method} {_fixed(estimate / factor, decimals)} {symbol}"
    return bracket, f"{method} {format_bytes(estimate)}"


def format_count_bracket(low: float | None, high: float | None, estimate: float | None = None,
                         method: str | None = "onset") -> str:
    """A count measured as a bracket (TLB entries), as format_size writes sizes: (68, 74, 71) -> '68–74 · onset
    71'; (64, 128) -> '64–128' (a coarse curve: no estimate)."""
    if low is None or high is None:
        return format_count(estimate)
    text = f"{format_count(low)}–{format_count(high)}"
    return f"{text} · {method} {format_count(estimate)}" if estimate is not None and method else text


@dataclass(frozen=True)
class Unit:
    """A display unit: `factor` base units make one of it (the base is ns, B/s, operations/s, Hz or FLOP/s)."""
    symbol: str
    factor: float

    def scaled(self, base_value: float | None) -> float | None:
        return None if base_value is None else base_value / self.factor

    def text(self, base_value: float | None) -> str:
        """The value in this unit, without the symbol (tables say the unit in their header)."""
        return "" if base_value is None else format_number(base_value / self.factor)


# Each quantity's units, smallest first, in its base unit (ns, B/s, operations/s, Hz, FLOP/s).
QUANTITIES: dict[str, tuple[Unit, ...]] = {
    "time": (Unit("ns", 1.0), Unit("µs", 1e3), Unit("ms", 1e6), Unit("s", 1e9)),
    "rate": (Unit("MB/s", 1e6), Unit("GB/s", 1e9)),
    "iops": (Unit("IOPS", 1.0), Unit("k IOPS", 1e3), Unit("M IOPS", 1e6)),
    "frequency": (Unit("MHz", 1e6), Unit("GHz", 1e9)),
    "flops": (Unit("MFLOP/s", 1e6), Unit("GFLOP/s", 1e9), Unit("TFLOP/s", 1e12)),
}
# What a value of each column kind is in, as (quantity, base units per value).
KINDS: dict[str, tuple[str, float]] = {
    "ns": ("time", 1.0), "us": ("time", 1e3), "s": ("time", 1e9),
    "gb_s": ("rate", 1e9), "mb_s": ("rate", 1e6), "bytes_per_s": ("rate", 1.0),
    "iops": ("iops", 1.0),
    "ghz": ("frequency", 1e9), "gflop_s": ("flops", 1e9),
}
NS, GB_S = QUANTITIES["time"][0], QUANTITIES["rate"][1]


def to_base(value: float | None, kind: str) -> float | None:
    """A value of column kind `kind` in its quantity's base unit (ns, B/s, IOPS)."""
    return None if value is None else value * KINDS[kind][1]


def best_unit(quantity: str, base_value: float) -> Unit:
    """The largest unit in which `base_value` is at least 1 (the smallest unit for values below that)."""
    units = QUANTITIES[quantity]
    chosen = units[0]
    for unit in units:
        if abs(base_value) >= unit.factor:
            chosen = unit
    return chosen


def choose_unit(quantity: str, base_values: list[float | None]) -> Unit:
    """One unit for a set of values (a section's table and chart): the one that reads their median best,
    or the next larger one where the largest value would need five digits or more."""
    present = sorted(abs(value) for value in base_values if value is not None and math.isfinite(value) and value != 0)
    if not present:
        return QUANTITIES[quantity][0]
    units = QUANTITIES[quantity]
    index = units.index(best_unit(quantity, present[len(present) // 2]))
    if present[-1] / units[index].factor >= 10_000 and index + 1 < len(units):
        index += 1
    return units[index]


def format_quantity(value: float | None, kind: str) -> str:
    """One value with its unit chosen by its own magnitude: 53050 (ns) -> '53.1 µs'."""
    if value is None:
        return ""
    if not math.isfinite(value):
        return NOT_FINITE
    quantity, factor = KINDS[kind]
    base = to_base(value, kind)
    # zero has no magnitude to choose by: it prints in the unit it came in (0 s, not 0 ns)
    unit = best_unit(quantity, base if base else factor)
    return f"{unit.text(base)} {unit.symbol}"


def format_time_ns(value: float | None) -> str:
    """83.2 -> '83.2 ns', 53050 -> '53.1 µs', 4.5e6 -> '4.5 ms'."""
    return format_quantity(value, "ns")


def format_gb_s(value: float | None) -> str:
    """A rate given in GB/s: 12.34 -> '12.3 GB/s', 0.412 -> '412 MB/s'."""
    return format_quantity(value, "gb_s")


def format_iops(value: float | None) -> str:
    """18770 -> '18.8 k IOPS'."""
    return format_quantity(value, "iops")


# The units a measured value can arrive with (flags, the summary) and how to print one of each.
_BY_UNIT = {"ns": format_time_ns, "us": lambda value: format_quantity(value, "us"),
            "s": lambda value: format_quantity(value, "s"), "GB/s": format_gb_s,
            "MB/s": lambda value: format_quantity(value, "mb_s"), "IOPS": format_iops, "B": format_bytes,
            "bytes": format_bytes, "GHz": lambda value: format_quantity(value, "ghz"),
            "GFLOP/s": lambda value: format_quantity(value, "gflop_s")}


def format_with_unit(value: float | None, unit: str | None) -> str:
    """A value that arrives with its unit's name ('ns', 'GB/s', 'fraction' ...), printed for reading."""
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return NOT_FINITE
    if unit in _BY_UNIT:
        return _BY_UNIT[unit](value)
    return f"{format_number(value)} {unit}" if unit else format_number(value)


_SCIENTIFIC = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?[eE][+-]?\d+(?![\w.])")
# at most 19 digits, an exabyte's count: a longer number (a host's note) stays as it was written
_BYTE_COUNT = re.compile(r"(?<![\w.])(\d{4,19}) ?(?:B|bytes)(?![\w])")
# the largest value written out in full: '1e308' would become 309 digits and commas, a page 100 times its note
_PLAIN_LIMIT = 1e15
# What Python's formatting makes of a value that is not finite, or of a tiny negative one ('%.3g')
_NOT_FINITE = re.compile(r"(?<![\w.])[+-]?(?:inf|nan|infinity)(?![\w])", re.IGNORECASE)
_MINUS_ZERO = re.compile(r"(?<![\w.])-0(?:\.0+)?(?![\w.])")


def _plain(written: str) -> str:
    value = float(written)
    return format_number(value) if abs(value) < _PLAIN_LIMIT else written


def readable_text(text: str) -> str:
    """Free text written by a kernel, the inference or a check (notes, evidence), with its numbers made
    readable: '268435456 B' -> '256 MiB', '1.638e+04' -> '16,380', '-0' -> '0', 'inf' -> NOT_FINITE."""
    text = _BYTE_COUNT.sub(lambda match: format_bytes(int(match.group(1))), text)
    text = _SCIENTIFIC.sub(lambda match: _plain(match.group(0)), text)
    return _MINUS_ZERO.sub("0", _NOT_FINITE.sub(NOT_FINITE, text))
