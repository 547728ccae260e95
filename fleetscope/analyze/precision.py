"""How sure a run is: the precision its kernels reached, per experiment and over the whole run.

Every kernel point records how it was sampled (`context.precision`: the CI95 half-width of its median
relative to the median, the target it sampled to, why it stopped). The warehouse views `precision_points`
(per point) and `precision_summary` (per run and experiment) read it; `run_precision` turns one run's rows
into numbers and one sentence for a page or a CI log. A run loaded from bundles older than the precision
record has no rows there, and `run_precision` says so instead of inventing a figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import duckdb

from fleetscope.store.batch import Batch

# How many of the least sure experiments the sentence names.
LEAST_SURE_NAMED = 3


@dataclass(frozen=True)
class ExperimentPrecision:
    """One experiment of one run (a row of the view precision_summary)."""
    experiment: str
    points: int
    target_rel: float | None          # None: a fixed number of samples per point
    points_met: int
    share_met: float | None           # None without a target
    stopped_at_target: int
    stopped_at_cap: int
    fixed_count: int
    median_achieved_rel: float | None
    p90_achieved_rel: float | None
    requeued: int                     # first attempts measured again (they drifted until their cap)
    drifting_at_cap: int              # points that stand although they still drifted at their cap
    sampling_s: float | None
    wall_s: float | None              # the experiment's wall time, set-up included


@dataclass(frozen=True)
class RunPrecision:
    """One run of one host: its experiments, the totals over every point that stands, and the sentence."""
    run_id: str
    host: str
    experiments: tuple[ExperimentPrecision, ...]
    points: int
    points_with_target: int
    points_met: int
    median_achieved_rel: float | None
    p90_achieved_rel: float | None
    requeued: int
    targets: tuple[float, ...]
    sentence: str

    @property
    def share_met(self) -> float | None:
        return self.points_met / self.points_with_target if self.points_with_target else None

    @property
    def wall_s(self) -> float | None:
        walls = [e.wall_s for e in self.experiments if e.wall_s is not None]
        return sum(walls) if walls else None


def percent(share: float | None) -> str:
    """0.0123 -> '1.2%', 0.5 -> '50%'; None -> 'unknown'."""
    if share is None:
        return "unknown"
    value = share * 100
    return f"{value:.2g}%" if value < 10 else f"{value:.0f}%"


def _least_sure(experiments: tuple[ExperimentPrecision, ...]) -> str:
    """'aio (median ±5.2%), c2c (±3.1%)': the experiments with the widest median half-width."""
    ranked = sorted((e for e in experiments if e.median_achieved_rel is not None),
                    key=lambda e: e.median_achieved_rel, reverse=True)[:LEAST_SURE_NAMED]
    return ", ".join(f"{e.experiment} ({'median ' if i == 0 else ''}±{percent(e.median_achieved_rel)})"
                     for i, e in enumerate(ranked))


def describe(run: RunPrecision) -> str:
    """One sentence on how sure the run is."""
    if run.points == 0:
        return ("This run's points do not say how precise they are (their records carry no context.precision: "
                "measured before fleetscope recorded it, or nothing was measured).")
    spread = (f"median CI95 half-width ±{percent(run.median_achieved_rel)} of the median, "
              f"90% of points within ±{percent(run.p90_achieved_rel)}")
    least = _least_sure(run.experiments)
    least_text = f"; least sure: {least}" if least else ""
    if run.points_with_target == 0:
        return (f"Fixed sample counts, no precision target (the quick profile): {run.points} points, "
                f"{spread}{least_text}.")
    target = f"the ±{percent(run.targets[0])} target" if len(run.targets) == 1 else "their experiment's target"
    untargeted = run.points - run.points_with_target
    extra = f" ({untargeted} more took a fixed count)" if untargeted else ""
    again = (f"; {run.requeued} point{'s' if run.requeued != 1 else ''} drifted until the time cap and "
             f"{'were' if run.requeued != 1 else 'was'} measured again") if run.requeued else ""
    return (f"{run.points_met} of {run.points_with_target} points ({percent(run.share_met)}) reached {target}"
            f"{extra}; {spread}{least_text}{again}.")


def from_rows(fetch: Callable[[str], list[dict]], run_id: str, host: str) -> RunPrecision:
    """The precision of one run of one host from its rows of the report queries precision_run and
    precision_experiments (`fetch(query)`, as a host page reads them)."""
    experiments = tuple(ExperimentPrecision(**{key: value for key, value in row.items()
                                               if key not in ("run_id", "host", "experiment_wall_s")},
                                            wall_s=row["experiment_wall_s"])
                        for row in fetch("precision_experiments"))
    totals = (fetch("precision_run") or [{}])[0]
    run = RunPrecision(run_id=run_id, host=host, experiments=experiments, points=totals.get("points", 0),
                       points_with_target=totals.get("points_with_target", 0), points_met=totals.get("points_met", 0),
                       median_achieved_rel=totals.get("median_achieved_rel"),
                       p90_achieved_rel=totals.get("p90_achieved_rel"), requeued=totals.get("requeued", 0),
                       targets=tuple(totals.get("targets") or ()), sentence="")
    return replace(run, sentence=describe(run))


def run_precision(connection: duckdb.DuckDBPyConnection, run_id: str, host: str) -> RunPrecision:
    """The precision of one run of one host, from the views precision_summary and precision_points."""
    batch = Batch(connection, [(run_id, host)])
    return from_rows(lambda query: batch.rows(query, (run_id, host)), run_id, host)
