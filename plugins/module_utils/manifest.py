"""Manifest fields derived from what actually happened on the host: used on the host by the fleetscope_pack
module, which writes the manifest, and on the controller by the manifest filters (plugins/filter/manifest.py)."""

from __future__ import annotations


def manifest_experiments(experiments, present_files):
    """Experiment records with `file`, and the `raw` outputs, kept only where the file exists in
    the bundle (a mode killed before it wrote anything leaves no file)."""
    present = set(present_files)
    out = []
    for record in experiments:
        record = dict(record)
        if record.get("file") not in present:
            record["file"] = None
        if "raw" in record:
            record["raw"] = [raw for raw in record["raw"] or [] if raw.get("path") in present]
        if record.get("wall_s") is not None:
            record["wall_s"] = float(record["wall_s"])
        out.append(record)
    return out


def _measured_raw(record):
    """Raw outputs that are measurements (MLC, fio, DiskSpd). perf counters of a kernel process are
    not: without the kernel's points they say how long a failing process ran, nothing more."""
    return any(raw.get("tool") != "perf" for raw in record.get("raw") or [])


def manifest_status(experiments, stage_error=None):
    """complete: every experiment ok; partial: something measured but not all; failed: nothing.

    A failed experiment that kept some points (its file is in the bundle) or tool outputs counts as
    measured.
    """
    statuses = [record["status"] for record in experiments]
    if stage_error is None and all(status in ("ok", "skipped") for status in statuses):
        return "complete"
    if any(record["status"] == "ok" or record.get("file") or _measured_raw(record) for record in experiments):
        return "partial"
    return "failed"
