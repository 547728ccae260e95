"""A hybrid host with known answers for the per-kind inference tests: the Raptor Lake i7-1370P's real
topology (tests/fixtures/sysfs, through the facts module) and a latency sweep per core kind drawn from
that kind's own caches, so each kind's inferred hierarchy has a known size and latency per level.

The curves sit on each kind's sysfs sizes (P-core L1d 48 KiB, L2 1.25 MiB; E-core L1d 32 KiB, L2 2 MiB;
L3 24 MiB shared) with each kind's own latencies and clock; a quarter-octave sweep from 4 KiB to 512 MiB
puts points on both sides of every step.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from sysfs_facts import read

MACHINE = "intel-raptorlake-hybrid"


@dataclass(frozen=True)
class Kind:
    kind: str
    cpu: int                               # its representative CPU in the fixture
    clock_ghz: float
    levels: tuple[tuple[float, int | None], ...]  # (ns, capacity bytes) per level, memory last (None)
    read_gb_s: tuple[float, ...]           # single-thread read bandwidth per level, memory last
    saxpy: tuple[float, float]             # (hit ns, miss penalty ns) of SAXPY per update


P_CORE = Kind("P-core", 4, 5.0, ((1.0, 48 << 10), (3.2, 1280 << 10), (12.0, 24 << 20), (90.0, None)),
              (200.0, 100.0, 50.0, 20.0), (0.5, 6.0))
E_CORE = Kind("E-core", 12, 3.9, ((1.3, 32 << 10), (5.0, 2 << 20), (16.0, 24 << 20), (110.0, None)),
              (100.0, 50.0, 30.0, 15.0), (0.8, 9.0))
KINDS = (P_CORE, E_CORE)
SAXPY_STRIDES = (1, 2, 4, 8, 16, 32)
SAXPY_UPDATES = 1 << 20  # per sample; 5 samples a point


def topology() -> dict:
    """The hybrid fixture's topology facts, without its NUMA part (the tests' manifests keep their own)."""
    found = read(MACHINE)
    found.pop("numa")
    return found


def latency_ns(kind: Kind, working_set_bytes: int) -> float:
    """A chase over `working_set_bytes` on `kind`: each level's latency up to its capacity, then a steep
    rise (a quarter of an octave wide) to the next."""
    log_size = math.log2(working_set_bytes)
    latency = kind.levels[0][0]
    for (lower, capacity), (upper, _) in zip(kind.levels, kind.levels[1:]):
        weight = 1 / (1 + math.exp(-16 * (log_size - math.log2(capacity) - 0.25)))
        latency += (upper - lower) * weight
    return latency


def _sizes() -> list[int]:
    """A quarter-octave sweep, 4 KiB to 512 MiB, each size a whole number of lines."""
    return [int(round(2 ** (step / 4) / 64)) * 64 for step in range(12 * 4, 29 * 4 + 1)]


def _point(experiment: str, kernel: str, metric: str, unit: str, params: dict, values: list[float],
           context: dict) -> dict:
    samples = sorted(values)
    return {"schema_version": 1, "experiment": experiment, "kernel": kernel, "metric": metric, "unit": unit,
            "params": params, "samples": samples,
            "summary": {"min": samples[0], "median": samples[2], "mean": round(sum(samples) / 5, 4),
                        "ci95_low": samples[1], "ci95_high": samples[3], "count": 5},
            "context": context}


def bandwidth(kind: Kind) -> list[dict]:
    """The kind's single-thread read sweep: each level's bandwidth up to its capacity, the next's beyond."""
    points = []
    for size in _sizes():
        level = next(index for index, (_, capacity) in enumerate(kind.levels) if capacity is None or size <= capacity)
        gb_s = kind.read_gb_s[level]
        points.append(_point("bandwidth", "bandwidth", "bandwidth", "GB/s", {
            "op": "read", "store": "none", "pattern": "sequential", "stride_bytes": 64, "read_lines": 1,
            "write_lines": 0, "read_percent": 100, "isa": "avx2", "vector_bytes": 32, "prefetch": "none",
            "prefetch_distance_blocks": None, "hw_prefetchers": "default", "threads": 1, "cpus": [kind.cpu],
            "smt_siblings_used": False, "working_set_bytes": size, "lines_per_pass": size // 64,
            "bytes_per_pass": size, "page_policy": "thp", "huge_bytes_granted": size if size >= 2 << 20 else 0,
            "cpu": kind.cpu, "accesses_per_sample": size // 64, "seed": 1}, [gb_s] * 5,
            {"core_clock_ghz": kind.clock_ghz, "wall_s": 0.1, "order_index": len(points)}))
    return points


def miss_rate(stride: int) -> float:
    """Misses per update of SAXPY over 8-byte elements: one per 64-byte line of x and of y touched."""
    return min(1.0, stride * 8 / 64) * 2


def saxpy(kind: Kind) -> list[dict]:
    """The kind's SAXPY strides: ns per update = hit + misses per update x penalty, exactly."""
    hit, penalty = kind.saxpy
    return [_point("saxpy", "saxpy", "saxpy", "ns", {
        "stride_elements": stride, "stride_bytes": stride * 8, "elements": 1 << 24, "element_bytes": 8,
        "array_bytes": 8 << 24, "updates_per_pass": 1 << 24, "passes_per_sample": 1, "page_policy": "thp",
        "huge_bytes_granted": 16 << 24, "cpu": kind.cpu, "accesses_per_sample": SAXPY_UPDATES, "seed": 1},
        [hit + miss_rate(stride) * penalty] * 5, {"core_clock_ghz": kind.clock_ghz, "wall_s": 1.0, "order_index": index})
        for index, stride in enumerate(SAXPY_STRIDES)]


def saxpy_perf(kind: Kind | None) -> dict[str, tuple[dict, str]]:
    """perf stat -x, around each stride's process, labelled as the role labels it (plugins/filter/core_kinds.py:
    'strides 8 on P-core (CPU 4)'; plain 'strides 8' on a one-kind host, kind None):
    {bundle path: (the raw entry of the manifest, the CSV)}; cache-misses counted."""
    found = {}
    for index, stride in enumerate(SAXPY_STRIDES):
        label = f"strides {stride}" + (f" on {kind.kind} (CPU {kind.cpu})" if kind else "")
        path = f"raw/perf/saxpy/{kind.kind if kind else 'all'}-{index:03d}.csv"
        misses = miss_rate(stride) * SAXPY_UPDATES * 5
        csv = (f"# started on Sun Nov 22 11:00:00 2026\n\n812.40,msec,task-clock,812400000,100.00,0.998,CPUs utilized\n"
               f"{misses:.0f},,cache-misses,812400000,100.00,,\n")
        found[path] = ({"path": path, "tool": "perf", "params": {"point": label, "point_index": index}}, csv)
    return found


def sweep(kind: Kind, page_policy: str = "thp", seed: int = 11) -> list[dict]:
    """The kind's latency sweep points, pinned to its representative CPU, with its core clock."""
    rng = random.Random(seed)
    points = []
    for size in _sizes():
        true_ns = latency_ns(kind, size)
        samples = [round(true_ns * (1 + abs(rng.gauss(0, 0.01))), 4) for _ in range(5)]
        points.append(_point("latency_sweep", "chase", "latency", "ns", {
            "working_set_bytes": size, "line_bytes": 64, "pattern": "random_cycle", "page_policy": page_policy,
            "huge_bytes_granted": size if size >= 2 << 20 else 0, "cpu": kind.cpu, "accesses_per_sample": 1048576,
            "seed": 12345}, samples, {"canary_before_ns": 1.0, "canary_after_ns": 1.0, "core_clock_ghz": kind.clock_ghz,
                                      "median_cycles": round(sorted(samples)[2] * kind.clock_ghz, 3), "wall_s": 0.25,
                                      "order_index": len(points)}))
    return points
