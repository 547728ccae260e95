"""Which registered experiments a run executes: enabled switches, --tags and --skip-tags."""

from __future__ import annotations


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


def perf_points(points, experiment, perf, events, enabled=True):
    """The points with their argv wrapped in `perf stat -x,` where the host's perf can count.

    `perf` is the facts' perf record ({capability, reason}); each wrapped point gets `raw`, the
    bundle-relative path of its CSV and the raw-output entry the manifest names.
    """
    if not enabled or perf.get("capability") not in ("hardware", "software"):
        return [dict(point, raw=None) for point in points]
    wrapped = []
    for index, point in enumerate(points):
        path = f"raw/perf/{experiment}/{index:03d}.csv"
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


def failure_summary(result, tail_lines=5):
    """One readable paragraph from a failed (possibly looped) command result: what failed, rc,
    and the tail of its stderr."""
    items = result.get("results") or [result]
    lines = []
    for item in items:
        if not item.get("failed"):
            continue
        label = (item.get("item") or {}).get("label", "") if isinstance(item.get("item"), dict) else ""
        stderr = (item.get("stderr") or item.get("msg") or "").strip().splitlines()[-int(tail_lines):]
        where = f"{label}: " if label else ""
        lines.append(f"{where}exit {item.get('rc', '?')}: " + " | ".join(stderr))
    return "\n".join(lines) or str(result.get("msg", "failed"))


class FilterModule:
    def filters(self):
        return {"select_experiments": select_experiments, "failure_summary": failure_summary,
                "perf_points": perf_points, "requeue_point": requeue_point}
