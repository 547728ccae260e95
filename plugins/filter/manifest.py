"""Manifest fields derived from what actually happened on the host (plugins/module_utils/manifest.py, which the
fleetscope_pack module uses on the host)."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path


def _manifest():
    """plugins/module_utils/manifest.py, loaded by path (this plugin may run from the repository or an installed
    collection)."""
    path = Path(__file__).resolve().parents[1] / "module_utils" / "manifest.py"
    spec = importlib.util.spec_from_file_location("fleetscope_manifest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


manifest_experiments = _manifest().manifest_experiments


def manifest_failed_experiments(experiments, error):
    """The experiments of a host whose bundle was not taken (lost before collect, or refused): none of
    their files reached the warehouse."""
    return [dict(record, status="failed", error=error) for record in manifest_experiments(experiments, ())]


def measure_stage(host, check_mode=False):
    """The stage of the measure play (playbooks/measure.yml) a host failed or dropped out in, told from how far it
    got, for the manifest's error: `host` is its variables (hostvars[<host>]). Before the measure play tried to tune
    it (no result registered as __tuning_applied, which a failed or unreachable try registers too): facts; until
    the lock is taken and the scratch directory made (one task; no scratch directory in check mode): tune; until the
    kernels built (skipped in check mode too): build; then characterize. A task a stage recorded it as it began,
    three tasks a host."""
    if "__tuning_applied" not in host:
        return "facts"
    if not _done(host.get("__tuning_applied")) or ("fleet_scratch_dir" not in host and not check_mode):
        return "tune"
    if not check_mode and not _done(host.get("__kernels_build")):
        return "build"
    return "characterize"


def restored_knobs(hosts, hostvars) -> list[str]:
    """'<host>: nr_hugepages=0, thp_enabled=madvise, ...' for each host whose knobs the measure play restored (its
    record fleet_knobs, each available knob's value read back after the restore), said once for the run on the
    controller, where a line a host was a task on every host."""
    lines = []
    for host in hosts:
        knobs = [knob for knob in hostvars[host].get("fleet_knobs") or []
                 if knob.get("available") and knob.get("after") is not None]
        if knobs:
            lines.append(f"{host}: " + ", ".join(f"{knob['name']}={knob['after']}" for knob in knobs))
    return lines


def _done(result) -> bool:
    """A registered task result that neither failed nor lost the host."""
    return isinstance(result, Mapping) and not result.get("failed") and not result.get("unreachable")


class FilterModule:
    def filters(self):
        return {"manifest_failed_experiments": manifest_failed_experiments, "measure_stage": measure_stage,
                "restored_knobs": restored_knobs}
