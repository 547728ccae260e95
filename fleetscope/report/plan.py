"""The host page's "Plan and price": what the run's plan promised before measuring (every experiment's
points and an upper bound on its time, fitted into the profile's budget, with what the budget cut) beside
what each experiment then did, and the experiments that ran more than 25% past their price (flag
plan_overshoot). A run collected before fleetscope priced its runs says so instead."""

from __future__ import annotations

from collections.abc import Callable

from fleetscope.units import format_count, format_percent, format_with_unit


# What the plan prices on top of the profile's budget (plugins/filter/plan.py OUTSIDE_BUDGET; tests/unit/test_plan.py
# holds the two equal): Intel MLC, run as the user set it, and the workloads, programs the budget cannot cut.
ON_TOP = ("mlc", "workloads")


def build(fetch: Callable[[str], list[dict]]) -> dict:
    """{present, sentence, rows} for the page, from the report queries run_plan and plan_vs_actual."""
    totals = (fetch("run_plan") or [{}])[0]
    rows = fetch("plan_vs_actual")
    if totals.get("plan_bound_s") is None:
        return {"present": False, "rows": [],
                "sentence": "This run carries no plan: it was collected before fleetscope priced its runs."}
    priced = [row for row in rows if row["planned_s"] is not None]
    actual = sum(row["actual_s"] or 0 for row in priced if row["actual_s"] is not None)
    budget = totals.get("plan_budget_s")
    over = [row["experiment"] for row in priced if row["overshoot"]]
    on_top = [row for row in priced if row["experiment"] in ON_TOP and row["planned_s"]]
    beside = ", ".join(f"{row['experiment']} {format_with_unit(row['planned_s'], 's')}" for row in on_top)
    # what the budget holds, and what is priced on top of it (a total past the budget need not break it)
    inside = totals["plan_bound_s"] - sum(row["planned_s"] for row in on_top)
    if budget is None:
        held = " (full profile: no budget)"
    elif on_top:
        held = (f": {format_with_unit(inside, 's')} within the {format_with_unit(budget, 's')} budget, {beside} "
                "on top of it")
    else:
        held = f" (budget {format_with_unit(budget, 's')})"
    planned = len([r for r in priced if not r["planned_skip"]])
    sentence = (f"Planned before measuring: {planned} experiment{'' if planned == 1 else 's'}, "
                f"{format_count(totals['plan_points'])} point{'' if totals['plan_points'] == 1 else 's'}, "
                f"at most {format_with_unit(totals['plan_bound_s'], 's')}"
                + held
                + f". They took {format_with_unit(actual, 's')}, "
                + (f"{format_percent(actual / totals['plan_bound_s'])}" if totals["plan_bound_s"] else "—")
                + " of that price.")
    if over:
        sentence += (f" {len(over)} ran more than 25% past their price ({', '.join(over)}): the plan's model of this "
                     "host did not hold (a busier or slower host than its rates; flag plan_overshoot).")
    short = (f"at most {format_with_unit(totals['plan_bound_s'], 's')}"
             + ("" if budget is None else f" (budget {format_with_unit(budget, 's')})" if not on_top else
                f" ({format_with_unit(inside, 's')} of a {format_with_unit(budget, 's')} budget, {beside} on top)")
             + f", took {format_with_unit(actual, 's')}" + (f"; {len(over)} over" if over else ""))
    return {"present": True, "sentence": sentence, "short": short, "rows": rows}
