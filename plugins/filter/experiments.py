"""Which registered experiments a run executes: enabled switches, --tags and --skip-tags."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def _kernel_points():
    """plugins/module_utils/kernel_points.py, loaded by path: the module that runs the points on the host
    judges them with it too, and Ansible, the tests and `fleetscope plan` load this file by path."""
    path = Path(__file__).resolve().parents[1] / "module_utils" / "kernel_points.py"
    spec = importlib.util.spec_from_file_location("fleetscope_kernel_points", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_points = _kernel_points()
requeue_point, kernel_exit, kernel_status = _points.requeue_point, _points.kernel_exit, _points.kernel_status


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


class FilterModule:
    def filters(self):
        return {"select_experiments": select_experiments, "failure_summary": failure_summary,
                "perf_points": perf_points, "requeue_point": requeue_point, "kernel_status": kernel_status}
