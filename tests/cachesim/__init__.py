"""Simulated machines with known caches and TLBs, measured the way fleetscope's kernels measure: the test truth
for the size estimator and the adaptive sweeps (fleetscope.analyze.inference, fleetscope.analyze.refine).

cachesim.c simulates, access by access, a dependent random chase (one Sattolo cycle over a buffer's lines, or
one line per page as the tlb kernel lays it out) through set-associative caches with LRU, tree-PLRU or random
replacement, indexed by physical line on randomly placed physical frames (4 KiB, or 2 MiB huge pages), with
non-inclusive, inclusive or exclusive (victim) levels and a set-associative TLB of one or two levels. Nothing
in it knows how fleetscope reads a curve: its numbers come from replaying the accesses. It is compiled once
per source version into build/cachesim/ (cc -O2 -shared) and called through ctypes.

`Machine.measure(sizes)` is a sweep: each size a fresh buffer (new random frames and cycle, as each kernel
process allocates its own), timed once its caches have settled (WARMUP_WALKS untimed walks first), its
simulated latency times the measurement's noise (lognormal, `noise` the standard deviation of its log:
0.02-0.10).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import random
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SOURCE = Path(__file__).with_name("cachesim.c")
BUILD = Path(__file__).resolve().parents[2] / "build" / "cachesim"
POLICIES = {"lru": 0, "plru": 1, "random": 2, "bip": 3}
KIB, MIB = 1024, 1024 * 1024
SMALL_PAGE, HUGE_PAGE = 4 * KIB, 2 * MIB
# Untimed walks before the timed ones: the kernels time samples of 10 ms or more, hundreds of walks of a buffer
# the size of an L2, so what they see is a cache's settled state. LRU settles in one walk of a cyclic chase;
# tree-PLRU does not: over 16 ways its first walks still hit some of the lines of a set holding 17-20, so a
# 16-way tree-PLRU L2 on 4 KiB frames missed 0.30 of its accesses at capacity after one walk, 0.46 after four,
# and 0.54 after eight or sixteen (the set-load model's LRU share: settled, tree-PLRU over a power of two of
# ways is LRU's shape); over 10 ways it settles at 0.23, near random replacement's 0.20.
WARMUP_WALKS = 8


class _Level(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint64), ("ways", ctypes.c_uint32), ("policy", ctypes.c_uint32),
                ("latency_ns", ctypes.c_double), ("victim", ctypes.c_uint32), ("inclusive", ctypes.c_uint32)]


class _Tlb(ctypes.Structure):
    _fields_ = [("entries", ctypes.c_uint32), ("ways", ctypes.c_uint32), ("policy", ctypes.c_uint32),
                ("miss_ns", ctypes.c_double)]


_LIBRARY = None


def library() -> ctypes.CDLL:
    """cachesim.c compiled (once per version of its source) and loaded."""
    global _LIBRARY
    if _LIBRARY is None:
        source = SOURCE.read_bytes()
        target = BUILD / f"libcachesim-{hashlib.sha256(source).hexdigest()[:16]}.so"
        if not target.exists():
            BUILD.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=BUILD, suffix=".so")
            os.close(handle)
            try:
                subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
                                "-shared", "-fPIC", "-o", temporary, str(SOURCE)], check=True)
                os.replace(temporary, target)  # atomic: parallel builders agree on one file
            finally:
                if os.path.exists(temporary):
                    os.unlink(temporary)
        _LIBRARY = ctypes.CDLL(str(target))
        _LIBRARY.cachesim_point.restype = ctypes.c_double
        _LIBRARY.cachesim_point.argtypes = [
            ctypes.POINTER(_Level), ctypes.c_uint32, ctypes.c_double, ctypes.POINTER(_Tlb), ctypes.c_uint32,
            ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32,
            ctypes.c_uint64, ctypes.c_uint64]
    return _LIBRARY


@dataclass(frozen=True)
class Cache:
    bytes: int
    ways: int
    policy: str                 # lru | plru | random | bip (adaptive insertion, as an LLC under thrash)
    latency_ns: float
    victim: bool = False        # exclusive: filled with what the level above evicts (AMD's L3)
    inclusive: bool = False     # its evictions remove the line from the levels above (Intel's older L3)

    @property
    def way_span(self) -> int:
        """Bytes between two lines of one set: size / ways."""
        return self.bytes // self.ways


@dataclass(frozen=True)
class Tlb:
    entries: int
    ways: int                   # entries for a fully associative one
    policy: str
    miss_ns: float              # what an access pays when it misses this level


@dataclass(frozen=True)
class Machine:
    """A core's caches (closest first), memory latency, TLB levels and how its memory is mapped."""
    caches: tuple[Cache, ...]
    memory_ns: float
    tlbs: tuple[Tlb, ...] = ()
    tlb_page_bytes: int = SMALL_PAGE   # what one TLB entry maps (a guest on 4 KiB host pages: 4 KiB)
    frame_bytes: int = HUGE_PAGE       # physically contiguous run of the buffer (THP granted end to end: 2 MiB)
    name: str = ""
    meta: dict = field(default_factory=dict, compare=False)

    def latency(self, size: int, *, pattern: str = "random-lines", passes: int = 2, seed: int = 0,
                max_accesses: int = 1 << 18, warmup: int = WARMUP_WALKS) -> float:
        """The simulated mean ns per access of a chase over `size` bytes (pattern 'random-lines': every line
        of the buffer; 'line-per-page': one line on each of size / tlb_page_bytes pages), no noise; a buffer of
        more than `max_accesses` lines is simulated on a share of its sets (exact for those sets: cachesim.c)."""
        levels = (_Level * max(1, len(self.caches)))(*[
            _Level(cache.bytes, cache.ways, POLICIES[cache.policy], cache.latency_ns, cache.victim, cache.inclusive)
            for cache in self.caches])
        tlbs = (_Tlb * max(1, len(self.tlbs)))(*[_Tlb(tlb.entries, tlb.ways, POLICIES[tlb.policy], tlb.miss_ns)
                                                  for tlb in self.tlbs])
        value = library().cachesim_point(levels, len(self.caches), self.memory_ns, tlbs, len(self.tlbs),
                                         self.tlb_page_bytes, self.frame_bytes, pattern == "line-per-page",
                                         int(size), warmup, passes, seed, max_accesses)
        if value < 0:
            raise ValueError(f"cachesim refused the point (size {size}, machine {self.name or self})")
        return value


@dataclass
class Sweep:
    """A sweep measured on a simulated machine: each point a fresh buffer, its latency times the noise."""
    machine: Machine
    noise: float
    seed: int
    pattern: str = "random-lines"
    measured: dict[int, float] = field(default_factory=dict)

    def measure(self, sizes) -> None:
        for size in sizes:
            size = int(size)
            if size in self.measured:
                continue
            point_seed = hash((self.seed, size)) & 0xFFFFFFFF
            rng = random.Random(point_seed)
            clean = self.machine.latency(size, pattern=self.pattern, seed=point_seed)
            self.measured[size] = clean * math.exp(rng.gauss(0.0, self.noise))

    @property
    def curve(self) -> tuple[list[int], list[float]]:
        sizes = sorted(self.measured)
        return sizes, [self.measured[size] for size in sizes]


# ---- a lab of simulated machines, swept as the kernels role sweeps them ---------------------------------

PROJECT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Profile:
    """A profile's sweep density and refinement, from roles/kernels/vars/main.yml (one source of truth)."""
    name: str
    points_per_octave: int
    refine_octaves: float
    refine_max_points: int
    tlb_refine_octaves: float
    tlb_refine_max_points: int
    refine_rounds: int | None = None   # the profile's cap on rounds (quick: 1), else what the density needs
    tlb_refine_rounds: int | None = None
    refine_llc_reach: float = 2.0      # refinement points up to this many times the largest cache
    refine_max_bytes_cap: int | None = None  # ... and none past this (quick: 8 MiB)


def profiles() -> dict[str, Profile]:
    import yaml

    table = yaml.safe_load((PROJECT / "roles" / "kernels" / "vars" / "main.yml").read_text(encoding="utf-8"))
    return {name: Profile(name, int(row["points_per_octave"]), float(row["refine_octaves"]),
                          int(row["refine_max_points"]), float(row["tlb_refine_octaves"]),
                          int(row["tlb_refine_max_points"]), row.get("refine_rounds"),
                          row.get("tlb_refine_rounds", row.get("refine_rounds")), float(row.get("refine_llc_reach") or 2),
                          row.get("refine_max_bytes_cap"))
            for name, row in table["__kernels_profiles"].items()}


def _sweep_filters():
    """plugins/filter/sweep.py, the module the role plans and refines its sweeps with."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fleetscope_sweep_filters", PROJECT / "plugins" / "filter" / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CLEAN: dict[tuple, float] = {}


def _clean(machine: Machine, size: int, pattern: str, seed: int) -> float:
    """A point's simulated latency, remembered: the profiles of one case share their coarse sizes."""
    key = (id(machine), size, pattern, seed)
    if key not in _CLEAN:
        _CLEAN[key] = machine.latency(size, pattern=pattern, seed=seed, passes=1)
    return _CLEAN[key]


def forget() -> None:
    _CLEAN.clear()


@dataclass
class SweepRun:
    """One sweep of a simulated machine in one profile: every point measured, how many the coarse pass had and
    how many refinement rounds ran."""
    sizes: list[int]
    ns: list[float]
    coarse_points: int
    refined_points: int
    rounds: int


def _noisy(machine: Machine, size: int, pattern: str, noise: float, seed: int) -> float:
    point_seed = (seed * 1_000_003 + size) & 0xFFFFFFFF
    return _clean(machine, size, pattern, point_seed) * math.exp(random.Random(point_seed).gauss(0.0, noise))


def _refine_max_bytes(profile: Profile, llc: int) -> int:
    """The largest refinement working set, as plugins/filter/plan.py sets it (refine_max_bytes)."""
    reach = int(profile.refine_llc_reach * llc)
    return min(reach, int(profile.refine_max_bytes_cap)) if profile.refine_max_bytes_cap else reach


def latency_sweep(machine: Machine, profile: Profile, noise: float, seed: int, *, min_bytes: int = 4096,
                  max_bytes: int | None = None) -> SweepRun:
    """The latency sweep of the kernels role on a simulated machine: the coarse pass (the role's sweep_sizes,
    4 KiB .. 4 x the largest cache), then the refinement rounds the role runs, each choosing its points with the
    role's own filter (refine_points) from the JSON lines measured so far."""
    filters = _sweep_filters()
    max_bytes = max_bytes or 4 * machine.caches[-1].bytes
    coarse = filters.sweep_sizes(min_bytes, max_bytes, profile.points_per_octave)
    measured = {size: _noisy(machine, size, "random-lines", noise, seed) for size in coarse}
    spec = {"experiment": "latency_sweep", "argv": ["chase", "--cpu", "0"], "coarse": coarse, "policies": ["thp"],
            "octaves": profile.refine_octaves, "max_points": profile.refine_max_points,
            "max_bytes": _refine_max_bytes(profile, machine.caches[-1].bytes), "guest": bool(machine.meta.get("guest"))}
    rounds = min(filters.refine_rounds(profile.points_per_octave, profile.refine_octaves, profile.refine_max_points),
                 profile.refine_rounds or 99)
    ran = 0
    for index in range(rounds):
        jsonl = "\n".join(json.dumps({"params": {"working_set_bytes": size, "page_policy": "thp", "cpu": 0},
                                      "summary": {"min": value}}) for size, value in measured.items())
        points = filters.refine_points(jsonl, {**spec, "rounds": rounds, "round": index})
        if not points:
            break
        ran += 1
        for point in points:  # one process a round: its sizes in one --sizes list
            for size in map(int, point["argv"][point["argv"].index("--sizes") + 1].split(",")):
                measured[size] = _noisy(machine, size, "random-lines", noise, seed)
    sizes = sorted(measured)
    return SweepRun(sizes, [measured[size] for size in sizes], len(coarse), len(measured) - len(coarse), ran)


def tlb_sweep(machine: Machine, profile: Profile, noise: float, seed: int, *, min_pages: int = 8,
              max_pages: int = 16384) -> SweepRun:
    """The tlb experiment on a simulated machine's TLBs: one line per page, the control chain's L1 latency
    (machine.memory_ns, no caches: what the paired difference leaves) plus the translation cost, then the
    role's refinement rounds (filter refine_points on the JSON lines so far)."""
    filters = _sweep_filters()
    coarse = filters.sweep_sizes(min_pages, max_pages, profile.points_per_octave, line_bytes=1)
    page = machine.tlb_page_bytes

    def measure(pages: int) -> float:
        return _noisy(machine, pages * page, "line-per-page", noise, seed)

    measured = {pages: measure(pages) for pages in coarse}
    l1_ns = machine.memory_ns
    spec = {"experiment": "tlb", "argv": ["tlb", "--cpu", "0"], "coarse": {"4k": coarse},
            "octaves": profile.tlb_refine_octaves, "max_points": profile.tlb_refine_max_points}
    rounds = min(filters.refine_rounds(profile.points_per_octave, profile.tlb_refine_octaves,
                                       profile.tlb_refine_max_points), profile.tlb_refine_rounds or 99)
    ran = 0
    for index in range(rounds):
        records = []
        for pages, value in measured.items():
            records.append({"params": {"pages": pages, "page_size": "4k", "chain": "control", "cpu": 0},
                            "summary": {"min": l1_ns}})
            records.append({"params": {"pages": pages, "page_size": "4k", "chain": "tlb", "cpu": 0},
                            "summary": {"min": value}, "context": {"paired_difference_median_ns": value - l1_ns}})
        points = filters.refine_points("\n".join(map(json.dumps, records)), {**spec, "rounds": rounds, "round": index})
        if not points:
            break
        ran += 1
        for point in points:
            for pages in point["argv"][point["argv"].index("--pages") + 1].split(","):
                measured[int(pages)] = measure(int(pages))
    pages = sorted(measured)
    return SweepRun(pages, [measured[count] for count in pages], len(coarse), len(measured) - len(coarse), ran)


# ---- random machines with known answers -----------------------------------------------------------------

L1_CHOICES = ((32 * KIB, 8), (48 * KIB, 12))                      # Zen / Gracemont vs Golden Cove L1d
L2_CHOICES = ((1 * MIB, 8), (1280 * KIB, 10), (2 * MIB, 16))      # Zen 4, Golden Cove client, Golden Cove server
POLICY_CHOICES = ("lru", "plru", "random")
LLC_POLICY_CHOICES = ("lru", "plru", "random", "bip")
NOISE_CHOICES = (0.02, 0.05, 0.10)
L1_TLB_CHOICES = ((64, 4), (72, 72), (48, 48), (32, 32), (96, 6))     # (entries, ways): 4-way Intel, fully
L2_TLB_CHOICES = ((1024, 8), (1536, 12), (2048, 16), (3072, 12))      # associative AMD and Arm


def random_machine(rng: random.Random, levels: int | None = None) -> Machine:
    """A core with 2, 3 or 4 cache levels and memory: L1d 32 or 48 KiB, L2 1, 1.25 or 2 MiB (each LRU, tree-PLRU
    or random), an L3 of 8 or 16 MiB and, with four levels, an L3 of 8 MiB and an L4 of 32 MiB (LRU, PLRU, random
    or adaptive insertion; the L3 exclusive or not); its memory on 2 MiB frames (bare-metal huge pages, TLB
    entries of 2 MiB) or 4 KiB frames (a guest on 4 KiB host pages, TLB entries of 4 KiB: TLB steps inside the
    levels). Latencies 2.8-4.5x apart from L1 to L2, 2.5-4x to L3, 2-3x to L4, memory 60-110 ns and at least 3x
    the last cache; a TLB miss adds what the published curves show (tests/fixtures/curves/SOURCES.md): an L1
    DTLB miss 13-45% of the L2 latency, a page walk 20-40% of the latency where the L2 TLB's reach ends. meta
    holds what a lab host's sysfs would say (sizes, way spans) and whether it is a guest."""
    levels = levels or rng.choice((2, 3, 3, 4))
    l1_bytes, l1_ways = rng.choice(L1_CHOICES)
    l2_bytes, l2_ways = rng.choice(L2_CHOICES)
    l1_latency = rng.uniform(0.8, 1.5)
    l2_latency = l1_latency * rng.uniform(2.8, 4.5)
    caches = [Cache(l1_bytes, l1_ways, rng.choice(POLICY_CHOICES), l1_latency),
              Cache(l2_bytes, l2_ways, rng.choice(POLICY_CHOICES), l2_latency)]
    latency = l2_latency
    if levels >= 3:
        latency *= rng.uniform(2.5, 4)
        l3_bytes = 8 * MIB if levels == 4 else rng.choice((8 * MIB, 16 * MIB))
        caches.append(Cache(l3_bytes, 16, rng.choice(LLC_POLICY_CHOICES), latency, victim=rng.random() < 0.5))
    if levels == 4:
        latency *= rng.uniform(2, 3)
        caches.append(Cache(32 * MIB, 16, rng.choice(LLC_POLICY_CHOICES), latency))
    memory_ns = max(latency * rng.uniform(3, 6), rng.uniform(60, 110))
    guest = rng.random() < 0.5
    page = SMALL_PAGE if guest else HUGE_PAGE
    l1_tlb, l2_tlb = rng.choice(L1_TLB_CHOICES), rng.choice(L2_TLB_CHOICES)
    reach = l2_tlb[0] * page
    walked_on = next((cache.latency_ns for cache in caches if cache.bytes > reach), memory_ns)
    tlbs = (Tlb(l1_tlb[0], l1_tlb[1], rng.choice(POLICY_CHOICES), l2_latency * rng.uniform(0.13, 0.45)),
            Tlb(l2_tlb[0], l2_tlb[1], rng.choice(POLICY_CHOICES), walked_on * rng.uniform(0.2, 0.4)))
    return Machine(tuple(caches), memory_ns, tlbs, page, page,
                   meta={"guest": guest, "sysfs": [cache.bytes for cache in caches],
                         "way_spans": tuple(cache.way_span for cache in caches)})


def random_tlb_machine(rng: random.Random) -> Machine:
    """A core's TLBs alone, as the tlb experiment sees them (4 KiB pages, its control chain's L1 latency as the
    base): an L1 DTLB of 32-96 entries and an L2 TLB of 1024-3072, each LRU, tree-PLRU or random."""
    l1_ns = rng.uniform(0.8, 1.5)
    (l1_entries, l1_ways), (l2_entries, l2_ways) = rng.choice(L1_TLB_CHOICES), rng.choice(L2_TLB_CHOICES)
    tlbs = (Tlb(l1_entries, l1_ways, rng.choice(POLICY_CHOICES), l1_ns * rng.uniform(1, 3)),
            Tlb(l2_entries, l2_ways, rng.choice(POLICY_CHOICES), l1_ns * rng.uniform(4, 15)))
    return Machine((), l1_ns, tlbs, SMALL_PAGE, SMALL_PAGE, meta={"entries": (l1_entries, l2_entries)})
