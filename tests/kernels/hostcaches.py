"""This host's cache sizes, for the kernel tests whose working sets must sit inside one level or beyond the
last: a size fixed in a test lands on some core's edge (1 MiB is exactly a Zen 4 L2, where the latency of a
random chase is bimodal: 10.6 or 13.6 ns from one run to the next). Read from the sysfs files the kernels'
own levels.c reads (/sys/devices/system/cpu/cpu0/cache/index*: data and unified caches), so a test asks for
a level by name, and its size follows the host.

The placement rules are the zero_queue kernel's: half of L1d; inside a higher level, the geometric midpoint
of the level below and that level (1 MiB L2 over 32 KiB L1d: 181 KiB, a factor 5.7 from either edge);
beyond the last level, a multiple of it with a floor. A host whose sysfs lists no caches (some VMs and Arm
firmware) gets FALLBACK, and `source` says so, for the test's message."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
LINE = 64
# Ordinary sizes of a current server core: 32 KiB L1d, 1 MiB L2, 32 MiB last level.
FALLBACK = {"L1d": 32 << 10, "L2": 1 << 20, "L3": 32 << 20}


def _size_bytes(text: str) -> int:
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
    return int(text.rstrip("KMG")) * factor


def _whole_lines(size: float) -> int:
    return max(2, round(size / LINE)) * LINE


@dataclass(frozen=True)
class HostCaches:
    levels: dict[str, int]  # "L1d", "L2", "L3" ... -> bytes, lowest level first
    source: str

    @property
    def llc(self) -> int:
        return self.levels[list(self.levels)[-1]]

    def inside(self, name: str) -> int:
        """A working set well inside level `name` and well above the level below it."""
        names = list(self.levels)
        if name not in names:
            raise KeyError(f"{name}: this host's levels are {', '.join(names)} ({self.source})")
        position = names.index(name)
        if position == 0:
            return _whole_lines(self.levels[name] / 2)
        return _whole_lines(math.sqrt(self.levels[names[position - 1]] * self.levels[name]))

    def beyond_llc(self, factor: int = 2, floor: int = 256 << 20) -> int:
        """A working set `factor` times the last level, at least `floor`: served by memory."""
        return max(factor * self.llc, floor) // LINE * LINE

    def describe(self) -> str:
        return ", ".join(f"{name} {size >> 10} KiB" for name, size in self.levels.items()) + f" ({self.source})"


def host_caches(cache_dir: Path = SYSFS_CACHE) -> HostCaches:
    levels: dict[int, int] = {}
    for index in sorted(cache_dir.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _size_bytes((index / "size").read_text().strip())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size > 0:
            levels.setdefault(level, size)
    if not levels:
        return HostCaches(dict(FALLBACK), f"fallback: {cache_dir} lists no data or unified cache")
    named = {("L1d" if level == 1 else f"L{level}"): levels[level] for level in sorted(levels)}
    return HostCaches(named, str(cache_dir))


CACHES = host_caches()
