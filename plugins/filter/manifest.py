"""Manifest fields derived from what actually happened on the host (plugins/module_utils/manifest.py, which the
fleetscope_pack module uses on the host)."""

from __future__ import annotations

import importlib.util
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


class FilterModule:
    def filters(self):
        return {"manifest_failed_experiments": manifest_failed_experiments}
