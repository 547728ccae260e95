"""Which registered experiments a run executes: enabled switches, --tags and --skip-tags."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from ansible.plugins.filter.core import randomize_list  # the `shuffle` filter: the same order as the role's


def _kernel_points():
    """plugins/module_utils/kernel_points.py, loaded by path: the module that runs the points on the host
    judges them with it too, and Ansible, the tests and `fleetscope plan` load this file by path."""
    path = Path(__file__).resolve().parents[1] / "module_utils" / "kernel_points.py"
    spec = importlib.util.spec_from_file_location("fleetscope_kernel_points", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sibling(name):
    """A filter module of this folder, loaded by path (as plugins/filter/plan.py loads its own)."""
    spec = importlib.util.spec_from_file_location(f"fleetscope_experiments_{name}", Path(__file__).resolve().parent
                                                  / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_points = _kernel_points()
requeue_point, kernel_exit, kernel_status = _points.requeue_point, _points.kernel_exit, _points.kernel_status
_plan, _kinds = _sibling("plan"), _sibling("core_kinds")
# A kernel's note of what it left out (write_cost's flush on riscv64, bandwidth's non-temporal points in plain C).
_SKIPPED = re.compile(r"(?m)^[a-z_0-9]+: skipped: (.+)$")


def select_experiments(registry, tagged):
    """Names of the registry's experiments that are enabled (entry `enabled`, from <role>_<name>_enabled)
    and that Ansible's --tags/--skip-tags selected: `tagged` is fleet_tagged_experiments, the names whose
    task in roles/fleet/tasks/select.yml ran (each is tagged with its family and its name)."""
    selected = []
    for name, spec in registry.items():
        enabled = spec["enabled"]
        if not isinstance(enabled, bool):
            raise ValueError(f"{name}: its _enabled switch must be true or false, got {enabled!r}")
        if enabled and name in tagged:
            selected.append(name)
    return selected


def perf_points(points, experiment, perf, events, enabled=True, prefix=""):
    """The points with their argv wrapped in `perf stat -x,` where the host's perf can count.

    `perf` is the facts' perf record ({capability, reason}); each wrapped point gets `raw`, the
    bundle-relative path of its CSV and the raw-output entry the manifest names. `prefix` keeps the CSVs of
    a later batch of the same experiment apart (an adaptive sweep's round: 'refine1-000.csv').
    """
    if not enabled or perf.get("capability") not in ("hardware", "software"):
        return [dict(point, raw=None) for point in points]
    wrapped = []
    for index, point in enumerate(points):
        path = f"raw/perf/{experiment}/{prefix}{index:03d}.csv"
        wrapped.append(dict(
            point,
            argv=["perf", "stat", "-x,", "-o", path, "-e", ",".join(events), "--", *point["argv"]],
            raw={"path": path, "tool": "perf", "params": {"point": point["label"], "point_index": index}},
        ))
    return wrapped


def failure_summary(result, tail_lines=5):
    """One readable paragraph from a failed (possibly looped) command result, or a failed fleetscope_points
    result (its second attempts in `requeued`): what failed, how it ended (kernel_status) and the tail of
    its stderr."""
    items = (result.get("results") or [result]) + list(result.get("requeued") or [])
    lines = []
    for item in items:
        if not item.get("failed"):
            continue
        label = (item.get("item") or {}).get("label", "") if isinstance(item.get("item"), dict) else ""
        stderr = (item.get("stderr") or item.get("msg") or "").strip().splitlines()[-int(tail_lines):]
        where = f"{label}: " if label else ""
        status = kernel_status(item) or f"exit {item.get('rc')}"
        lines.append(f"{where}{status}: " + " | ".join(stderr))
    return "\n".join(lines) or str(result.get("msg", "failed"))


def experiment_segments(selected, registry):
    """The selected experiments, in their (shuffled) order, as the task files that run them: an experiment
    with tasks of its own (registry entry `tasks: true`: a plan made on the host, a refinement, a knob to
    toggle) is its own segment, tasks/experiments/<name>.yml; each run of consecutive others, which need
    nothing but the plan's points, is one segment, tasks/run_batch.yml, all of it one module call on the host.
    Each segment: {file, experiment (the one, or None), batch (the names it runs)}."""
    segments = []
    for name in selected:
        if registry[name].get("tasks"):
            segments.append({"file": f"experiments/{name}.yml", "experiment": name, "batch": [name]})
        elif segments and segments[-1]["experiment"] is None:
            segments[-1]["batch"].append(name)
        else:
            segments.append({"file": "run_batch.yml", "experiment": None, "batch": [name]})
    return segments


def batch_experiments(batch, plan, registry, seed, settings):
    """What the points module runs for a batch (tasks/run_batch.yml): per experiment its name, its points as
    tasks/run_points.yml gives them for one experiment (the plan's, shuffled with the seed the role uses
    unless the registry says `shuffle: false`, once per core kind where the plan runs it so, perf stat around
    each where the host's perf counts) and its stderr log. `settings`: topology, per_core_kind,
    per_core_kind_experiments, perf (the facts' record), perf_events, perf_stat."""
    experiments = []
    for name in batch:
        points = _plan.plan_points(plan, name)
        if registry[name].get("shuffle", True):
            points = randomize_list(points, seed=f"{seed}{name}")
        points = _kinds.core_kind_points(points, name, settings["topology"], _kind_experiments(plan, name, settings))
        experiments.append({"name": name, "stderr_log": f"raw/{name}.stderr.log",
                            "points": perf_points(points, name, settings["perf"], settings["perf_events"],
                                                  settings["perf_stat"])})
    return experiments


def _kind_experiments(plan, name, settings):
    """The experiments run once per core kind, unless the plan measures `name` on one kind (a budget's cut)."""
    kinds = _plan.plan_entry(plan, name).get("kinds", 2)
    return settings["per_core_kind_experiments"] if settings["per_core_kind"] and kinds > 1 else []


def batch_records(experiments, measured, plan, settings, kernels_cpu, failure=None):
    """The manifest's record of each experiment of a batch (fleet_experiments), as tasks/run_points.yml makes
    one: its status, the failure summary of a failed one, its notes (the plan's, the core kinds', each
    `<kernel>: skipped:` line of its stderr), its perf CSVs (second attempts' too) and its wall time on the
    host. `measured` is the module's RV(experiments), None where the module did not run (check mode); with
    `failure` (the module call failed whole: the host went away) each experiment is failed with it."""
    outcomes = {outcome["name"]: outcome for outcome in measured or []}
    records = []
    for experiment in experiments:
        name = experiment["name"]
        outcome = outcomes.get(name) or {}
        notes = (_plan.plan_notes(plan, name)
                 + _kinds.core_kind_notes(settings["topology"], name, _kind_experiments(plan, name, settings),
                                          kernels_cpu)
                 + list(dict.fromkeys(note for record in outcome.get("results", [])
                                      for note in _SKIPPED.findall(record.get("stderr") or ""))))
        failed = failure is not None or outcome.get("failed", False)
        raw = ([point["raw"] for point in experiment["points"] if point.get("raw")]
               + [record["item"]["raw"] for record in outcome.get("requeued", []) if record["item"].get("raw")])
        records.append({
            "name": name, "file": f"results/{name}.jsonl", "notes": notes, "status": "failed" if failed else "ok",
            "error": (failure if failure is not None else failure_summary(outcome)) if failed else None, "raw": raw,
            "wall_s": round(outcome["end"] - outcome["start"], 3) if "end" in outcome else 0.0,
        })
    return records


class FilterModule:
    def filters(self):
        return {"select_experiments": select_experiments, "failure_summary": failure_summary,
                "perf_points": perf_points, "requeue_point": requeue_point, "kernel_status": kernel_status,
                "experiment_segments": experiment_segments, "batch_experiments": batch_experiments,
                "batch_records": batch_records}
