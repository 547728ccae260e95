"""The facts module (plugins/modules/fleetscope_facts.py) read against a real machine's sysfs dump of
tests/fixtures/sysfs (SOURCES.md) through FLEETSCOPE_SYSFS_ROOT: the topology, planning, view and page
tests of hosts this machine is not."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SYSFS = ROOT / "tests" / "fixtures" / "sysfs"


@functools.cache
def facts_module():
    """The module, loaded once from its file (it is an Ansible module, not part of the package)."""
    spec = importlib.util.spec_from_file_location("fleetscope_facts", ROOT / "plugins" / "modules" / "fleetscope_facts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(machine: str | Path, reader: str = "topology_facts") -> dict:
    """What `reader` of the facts module says of `machine` (a directory of tests/fixtures/sysfs, or any root)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FLEETSCOPE_SYSFS_ROOT", str(SYSFS / machine))
        return getattr(facts_module(), reader)()
