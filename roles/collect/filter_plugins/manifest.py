"""Manifest fields derived from what actually happened on the host."""

from __future__ import annotations


def manifest_experiments(experiments, present_files):
    """Experiment records with `file` set only where the file exists in the bundle."""
    present = set(present_files)
    out = []
    for record in experiments:
        record = dict(record)
        if record.get("file") not in present:
            record["file"] = None
        if record.get("wall_s") is not None:
            record["wall_s"] = float(record["wall_s"])
        out.append(record)
    return out


def manifest_status(experiments, stage_error=None):
    """complete: every experiment ok; partial: something measured but not all; failed: nothing.

    A failed experiment that kept some points (its file is in the bundle) counts as measured.
    """
    statuses = [record["status"] for record in experiments]
    if stage_error is None and all(status in ("ok", "skipped") for status in statuses):
        return "complete"
    if any(record["status"] == "ok" or record.get("file") for record in experiments):
        return "partial"
    return "failed"


class FilterModule:
    def filters(self):
        return {"manifest_experiments": manifest_experiments, "manifest_status": manifest_status}
