"""Which registered experiments a run executes: enabled switches, --tags and --skip-tags."""

from __future__ import annotations


def select_experiments(registry, run_tags, skip_tags):
    """Names of enabled experiments (registry entry `enabled`, from kernels_<name>_enabled) that
    the tags select.

    `--tags latency` selects every experiment carrying that tag; with no --tags (run_tags is
    ['all']) every enabled experiment runs; `--skip-tags` removes experiments carrying a skipped tag.
    """
    run_all = "all" in run_tags
    selected = []
    for name, spec in registry.items():
        enabled = spec["enabled"]
        if not isinstance(enabled, bool):
            raise ValueError(f"kernels_{name}_enabled must be true or false, got {enabled!r}")
        tags = set(spec.get("tags", [])) | {name}
        if not enabled or tags & set(skip_tags):
            continue
        if run_all or tags & set(run_tags):
            selected.append(name)
    return selected


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
        return {"select_experiments": select_experiments, "failure_summary": failure_summary}
