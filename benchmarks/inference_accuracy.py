#!/usr/bin/env python3
"""How well the hierarchy inference reads curves it has never seen (tests/inference_check.py).

Usage: benchmarks/inference_accuracy.py [--curves 2000] [--leave-one-out]

1. The published curves (tests/fixtures/curves): one-to-one or not, levels matched, extra levels.
2. Synthetic curves from random known hierarchies (seeds 0 .. N-1): per category (sampling density, noise,
   pattern, levels, closest capacities, relative, truncated) the share of true levels inside an inferred
   level's rise widened by one sample step, the extra levels per curve and the share of curves read one-to-one.
3. --leave-one-out: the method's tuned constants (fleetscope.analyze.inference.Tuning) re-chosen over a grid with each
   published cache curve left out (most of the other seven one-to-one, then the best synthetic score on
   separate tuning seeds), and that curve scored with the constants chosen without it.
Pure computation: no machine lock needed.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "tests"))  # tests/inference_check.py: synthetic curves and their score

from fleetscope.analyze.inference import TUNING, Tuning, infer_cache_levels  # noqa: E402
from inference_check import infer_synthetic, published_curves, random_curve, score_levels  # noqa: E402

CURVES = PROJECT / "tests" / "fixtures" / "curves"
TUNING_SEEDS = range(1_000_000, 1_000_000 + 300)   # disjoint from the evaluation seeds
GRID = {
    "level_step_ratio": (1.4, 1.5, 1.6, 1.7, 1.8, 2.0),
    "split_concentration": (0.4, 0.45, 0.5, 0.55, 0.6),
    "hidden_step_ratio": (1.6, 2.0, 2.5),
    "relative_l1_ns": (0.5, 1.0, 2.0),
}


def published_scores(tuning: Tuning) -> dict:
    return {curve.name: score_levels(infer_cache_levels(curve.sizes, curve.ns, reading=curve.reading, tuning=tuning),
                                     curve.true_sizes) for curve in published_curves(CURVES)}


def print_published(tuning: Tuning) -> None:
    scores = published_scores(tuning)
    print(f"published curves ({sum(score.one_to_one for score in scores.values())} of {len(scores)} one-to-one):")
    for name, score in scores.items():
        print(f"  {'one-to-one' if score.one_to_one else 'MISREAD   '}  {score.matched}/{score.true_levels} levels, "
              f"{score.extra} extra  {name}")


def print_synthetic(count: int) -> None:
    totals: dict = defaultdict(lambda: [0, 0, 0, 0, 0])   # true levels, matched, extra, one-to-one, curves
    started = time.perf_counter()
    for seed in range(count):
        curve = random_curve(seed)
        score = score_levels(infer_synthetic(curve), curve.true_sizes)
        for key in [("all", ""), *curve.categories.items()]:
            total = totals[key]
            for index, value in enumerate((score.true_levels, score.matched, score.extra, score.one_to_one, 1)):
                total[index] += value
    elapsed = time.perf_counter() - started
    print(f"\nsynthetic hierarchies: {count} curves, {elapsed / count * 1000:.2f} ms per inference")
    print(f"  {'category':<18} {'value':<16} {'levels within a step':>21} {'extra per curve':>16} "
          f"{'one-to-one':>11} {'curves':>7}")
    for (category, value), (true_levels, matched, extra, exact, curves) in sorted(totals.items(), key=str):
        print(f"  {category:<18} {str(value):<16} {matched / max(true_levels, 1):>21.3f} {extra / curves:>16.3f} "
              f"{exact / curves:>11.3f} {curves:>7}")


def leave_one_out() -> None:
    tuning_curves = [random_curve(seed) for seed in TUNING_SEEDS]
    names = [curve.name for curve in published_curves(CURVES)]
    table = []
    started = time.perf_counter()
    for values in itertools.product(*GRID.values()):
        tuning = Tuning(**dict(zip(GRID, values)))
        published = published_scores(tuning)
        synthetic = sum(score_levels(infer_synthetic(curve, tuning), curve.true_sizes).one_to_one
                        for curve in tuning_curves) / len(tuning_curves)
        table.append((tuning, {name: published[name].one_to_one for name in names}, synthetic))
    print(f"\nleave-one-out over {len(table)} constant sets ({time.perf_counter() - started:.0f} s); "
          f"defaults {asdict(TUNING)}")
    for left_out in names:
        def merit(row, left_out=left_out):
            _, published, synthetic = row
            return sum(ok for name, ok in published.items() if name != left_out), synthetic
        tuning, published, synthetic = max(table, key=merit)
        others = sum(ok for name, ok in published.items() if name != left_out)
        chosen = {key: value for key, value in asdict(tuning).items() if value != getattr(TUNING, key)}
        print(f"  {'one-to-one' if published[left_out] else 'MISREAD   '}  {left_out}: chosen without it "
              f"{chosen or 'the defaults'} ({others}/{len(names) - 1} others one-to-one, synthetic {synthetic:.3f})")
    tuning, published, synthetic = max(table, key=lambda row: (sum(row[1].values()), row[2]))
    print(f"  all eight: {sum(published.values())}/{len(names)} one-to-one, synthetic {synthetic:.3f} with "
          f"{ {key: value for key, value in asdict(tuning).items() if value != getattr(TUNING, key)} or 'the defaults'}")
    _, published, synthetic = next(row for row in table if row[0] == TUNING)  # the defaults are on the grid
    print(f"  the defaults: {sum(published.values())}/{len(names)} one-to-one, synthetic {synthetic:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--curves", type=int, default=2000, help="synthetic hierarchies to score (default 2000)")
    parser.add_argument("--leave-one-out", action="store_true", help="re-choose the tuned constants per left-out curve")
    arguments = parser.parse_args()
    print_published(TUNING)
    print_synthetic(arguments.curves)
    if arguments.leave_one_out:
        leave_one_out()
    return 0


if __name__ == "__main__":
    sys.exit(main())
