"""Which registered experiments a run executes: enabled switches, --tags and --skip-tags."""

from __future__ import annotations


def select_experiments(registry, hostvars, run_tags, skip_tags):
    """Names of experiments whose kernels_<name>_enabled is true and that the tags select.

    `--tags latency` selects every experiment carrying that tag; with no --tags (run_tags is
    ['all']) every enabled experiment runs; `--skip-tags` removes experiments carrying a skipped tag.
    """
    run_all = "all" in run_tags
    selected = []
    for name, spec in registry.items():
        switch = f"kernels_{name}_enabled"
        if switch not in hostvars:
            raise ValueError(f"experiment {name} is registered but {switch} is not defined")
        tags = set(spec.get("tags", [])) | {name}
        if not hostvars[switch] or tags & set(skip_tags):
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
