#!/usr/bin/env python3
"""Seconds to a stated precision: three repetition protocols over the same points, in one run.

Usage: benchmarks/precision_economy.py [--points default|all] [--cpu 0] [--seed N] [--json FILE]
       (run it under the machine lock: flock /tmp/fleetscope-machine.lock benchmarks/precision_economy.py)

For points of the latency sweep (chase), the bandwidth sweep (bandwidth, read, one thread) and the TLB
sweep (tlb, 4 KiB pages), each measured three ways, the methods in a seeded random order per point:

  (a) lab   the fixed protocol of hand-made lab reports: warm-up, then 3 repeats of 10 s, mean ± std
            (kernel --samples 3 --min-sample-ms 10000; a tlb pair's repeat is 10 s, 5 s per chain).
            Its warm-up is the kernel's calibration (two runs of >= 10 s in a row, longer than the
            protocol's 3 s), so its time is counted as the protocol's nominal 3 + 3 x 10 = 33 s, which
            favours it; the measured wall time is printed beside it.
  (b) fixed today's fixed `standard` counts: the profile's samples and sample time, no target.
  (c) adaptive `standard`: the same, with the profile's --target-ci and --max-point-seconds.

The profile's values come from roles/kernels/vars/main.yml. Per point and method: wall time (the whole
kernel process: set-up, calibration, samples), the CI95 half-width reached relative to the estimate
((a): the mean's t-interval, t(0.975, 2) x std / sqrt(3); (b), (c): the kernel's order-statistic
interval of the median) and the estimate itself. The figure that matters is the seconds each method
needs to reach a half-width <= 1% of its estimate: the measured time where it got there, else an
extrapolation with the half-width falling as 1/sqrt(samples), marked '*': (a) more 10 s repeats, with
the t-quantile of their count; (b), (c) the process's set-up and calibration once plus its sampling
time x (half-width / 1%)^2. Ratios a/c and b/c per point and their geometric mean, and the
agreement of the estimates ((a)'s mean and (b)'s median against (c)'s median, and whether each lies in
(c)'s interval).

Default points (a bounded run, about 7 minutes, nearly all of it method (a)): chase 16 KiB (L1) and
256 MiB (DRAM), bandwidth read 32 KiB (L1) and 256 MiB (DRAM), tlb 64 pages (L1 DTLB reach) and 4096
pages (past the L2 TLB). --points all adds chase 2 MiB and bandwidth 2 MiB (the L2/L3 region).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[1]
TARGET = 0.01
LAB_WARMUP_S, LAB_REPEATS, LAB_REPEAT_S = 3.0, 3, 10.0
# t(0.975, df) for df = 1..30; beyond, the Cornish-Fisher expansion z + (z^3 + z) / (4 df).
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)

POINTS = {
    "chase 16 KiB": ["chase", "--sizes", "16k"],
    "chase 256 MiB": ["chase", "--sizes", "256m"],
    "bandwidth read 32 KiB": ["bandwidth", "--ops", "read", "--stores", "regular", "--sizes", "32k"],
    "bandwidth read 256 MiB": ["bandwidth", "--ops", "read", "--stores", "regular", "--sizes", "256m"],
    "tlb 64 pages": ["tlb", "--pages", "64", "--page-size", "4k"],
    "tlb 4096 pages": ["tlb", "--pages", "4096", "--page-size", "4k"],
}
MORE_POINTS = {
    "chase 2 MiB": ["chase", "--sizes", "2m"],
    "bandwidth read 2 MiB": ["bandwidth", "--ops", "read", "--stores", "regular", "--sizes", "2m"],
}


def t975(df: int) -> float:
    return T975[df - 1] if df <= len(T975) else 1.96 + (1.96 ** 3 + 1.96) / (4 * df)


def standard_profile() -> dict:
    profiles = yaml.safe_load((PROJECT / "roles" / "kernels" / "vars" / "main.yml").read_text())["__kernels_profiles"]
    return profiles["standard"]


def build(workdir: Path) -> Path:
    source = workdir / "kernels"
    shutil.copytree(PROJECT / "kernels", source, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["make", "-s", "-C", str(source)], check=True, capture_output=True)
    return source / "build" / "fleetscope-kernels"


def method_args(method: str, kernel: str, profile: dict) -> list[str]:
    if method == "a":
        per_sample_ms = LAB_REPEAT_S * 1000 / (2 if kernel == "tlb" else 1)
        return ["--samples", str(LAB_REPEATS), "--min-sample-ms", f"{per_sample_ms:g}"]
    args = ["--samples", str(profile["samples"]), "--min-sample-ms", str(profile["min_sample_ms"])]
    if method == "c":
        args += ["--target-ci", str(profile["target_ci"]), "--max-point-seconds", str(profile["max_point_s"])]
    return args


def lab_samples_needed(mean: float, std: float) -> int | None:
    """Repeats of (a) until t(0.975, n-1) x std / sqrt(n) <= 1% of the mean (None: past 10000)."""
    for n in range(LAB_REPEATS, 10001):
        if t975(n - 1) * std / math.sqrt(n) <= TARGET * abs(mean):
            return n
    return None


def measure(binary: Path, point: list[str], method: str, profile: dict, cpu: int, seed: int) -> dict:
    argv = [str(binary), *point, "--cpu", str(cpu), "--seed", str(seed), *method_args(method, point[0], profile)]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.strip()[-500:]}")
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    # A tlb pair: the tlb chain's record is the point's figure (both chains were sampled alike).
    record = records[0]
    samples, summary = record["samples"], record["summary"]
    if method == "a":
        mean, std = statistics.fmean(samples), statistics.stdev(samples)
        half = t975(len(samples) - 1) * std / math.sqrt(len(samples)) / abs(mean)
        nominal = LAB_WARMUP_S + LAB_REPEATS * LAB_REPEAT_S
        needed = lab_samples_needed(mean, std)
        seconds = nominal if half <= TARGET else (
            LAB_WARMUP_S + needed * LAB_REPEAT_S if needed else math.inf)
        return {"estimate": mean, "std": std, "half_rel": half, "wall_s": wall, "counted_s": nominal,
                "seconds_to_target": seconds, "extrapolated": half > TARGET, "samples": len(samples),
                "low": mean * (1 - half), "high": mean * (1 + half), "stop": "fixed"}
    precision = record["context"]["precision"]
    half = precision["achieved_rel"] if precision["achieved_rel"] is not None else math.inf
    # Set-up and calibration stay; only the sampling grows with the samples needed.
    setup = max(wall - precision["sampling_s"], 0.0)
    seconds = wall if half <= TARGET else setup + precision["sampling_s"] * (half / TARGET) ** 2
    return {"estimate": summary["median"], "half_rel": half, "wall_s": wall, "counted_s": wall,
            "seconds_to_target": seconds, "extrapolated": half > TARGET, "samples": summary["count"],
            "low": summary["ci95_low"], "high": summary["ci95_high"], "stop": precision["stop"]}


def seconds_text(result: dict) -> str:
    value = result["seconds_to_target"]
    return "never" if math.isinf(value) else f"{value:.1f}{'*' if result['extrapolated'] else ''}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", choices=["default", "all"], default="default")
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()
    points = dict(POINTS, **(MORE_POINTS if args.points == "all" else {}))
    profile = standard_profile()
    rng = random.Random(args.seed)
    results: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="fleetscope-economy-") as tmp:
        binary = build(Path(tmp))
        names = list(points)
        rng.shuffle(names)
        for name in names:
            methods = ["a", "b", "c"]
            rng.shuffle(methods)
            results[name] = {}
            for method in methods:
                results[name][method] = measure(binary, points[name], method, profile, args.cpu, args.seed)
                print(f"{name} ({method}): {results[name][method]['wall_s']:.1f} s", file=sys.stderr)

    print(f"standard profile: {profile['samples']} samples of >= {profile['min_sample_ms']} ms, adaptive to "
          f"±{profile['target_ci'] * 100:g}% within {profile['max_point_s']} s per point; figure: seconds to a "
          f"CI95 half-width <= {TARGET * 100:g}% (* extrapolated as 1/sqrt(samples); (a) counted at its nominal "
          f"{LAB_WARMUP_S + LAB_REPEATS * LAB_REPEAT_S:g} s)\n")
    print("| point | (a) wall s | (a) ±% | (b) wall s | (b) ±% | (c) wall s | (c) ±% | (c) samples, stop "
          "| s to ±1%: a | b | c | a/c | b/c | a vs c | b vs c |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios_a, ratios_b = [], []
    for name in points:
        a, b, c = (results[name][m] for m in "abc")
        ratio_a = a["seconds_to_target"] / c["seconds_to_target"]
        ratio_b = b["seconds_to_target"] / c["seconds_to_target"]
        ratios_a.append(ratio_a)
        ratios_b.append(ratio_b)

        def agreement(other: dict) -> str:
            inside = c["low"] <= other["estimate"] <= c["high"]
            return f"{(other['estimate'] / c['estimate'] - 1) * 100:+.2f}%{'' if inside else ' (outside)'}"

        print(f"| {name} | {a['wall_s']:.1f} | {a['half_rel'] * 100:.2f} | {b['wall_s']:.2f} | "
              f"{b['half_rel'] * 100:.2f} | {c['wall_s']:.2f} | {c['half_rel'] * 100:.2f} | {c['samples']}, {c['stop']} "
              f"| {seconds_text(a)} | {seconds_text(b)} | {seconds_text(c)} | {ratio_a:.1f} | {ratio_b:.2f} "
              f"| {agreement(a)} | {agreement(b)} |")
    finite_a = [r for r in ratios_a if math.isfinite(r)]
    finite_b = [r for r in ratios_b if math.isfinite(r)]
    print(f"\ngeometric mean of seconds to ±1%: a/c {statistics.geometric_mean(finite_a):.1f}, "
          f"b/c {statistics.geometric_mean(finite_b):.2f} over {len(finite_a)} and {len(finite_b)} points")
    if args.json:
        args.json.write_text(json.dumps({"profile": profile, "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
