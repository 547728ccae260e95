"""Which registered experiments a run executes: enabled switches, --tags and --skip-tags."""

from __future__ import annotations

import re

# fleetscope-kernels' last stderr line under FLEETSCOPE_KERNELS_EXIT_NOTE=1 (kernels/include/cli.h, cli_exit).
_EXIT_NOTE = re.compile(r"^fleetscope-kernels: exit (\d+)$", re.M)


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


def requeue_point(point):
    """A point's second attempt (its kernel asked for one: it stopped at its time cap while drifting):
    the same argv with `--attempt 2`, and its perf CSV, where it has one, beside the first attempt's
    (`<NNN>.attempt2.csv`, raw params `attempt: 2`), so both attempts' counts are kept."""
    again = dict(point, label=f"{point['label']} (second attempt)", argv=[*point["argv"], "--attempt", "2"])
    if point.get("raw"):
        first = point["raw"]["path"]
        path = first.removesuffix(".csv") + ".attempt2.csv"
        again["argv"] = [path if arg == first else arg for arg in again["argv"]]
        again["raw"] = dict(point["raw"], path=path, params=dict(point["raw"]["params"], attempt=2))
    return again


def kernel_exit(result):
    """The exit status a fleetscope-kernels process reported itself (its exit note, the last one on
    its stderr), or None when it wrote none: it did not end by itself (a signal, the OOM killer).
    Its parent's rc is not enough: perf stat (6.1) reports a workload that ends before perf waits
    for it (a crash at start, a quick usage error) as exit 0, with no signal line."""
    notes = _EXIT_NOTE.findall((result or {}).get("stderr") or "")
    return int(notes[-1]) if notes else None


def kernel_status(result):
    """None when a fleetscope-kernels process ended by itself with status 0 (what ran it exited 0
    and the kernel's exit note says 0); else what happened, in words, for the failure record."""
    rc, note = result.get("rc", "?"), kernel_exit(result)
    if rc == 0 and note == 0:
        return None
    if rc == 0 and note is None:
        return "killed (no exit note from the kernel, though what ran it reported exit 0)"
    if rc == 0:
        return f"exit {note}"
    if isinstance(rc, int) and rc < 0:
        return f"killed by signal {-rc}"
    return f"exit {rc}"


def failure_summary(result, tail_lines=5):
    """One readable paragraph from a failed (possibly looped) command result: what failed, how it
    ended (kernel_status) and the tail of its stderr."""
    items = result.get("results") or [result]
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
