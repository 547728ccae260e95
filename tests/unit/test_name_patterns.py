"""Names must match their pattern whole (issue 14, finding 10): Python's `$` also matches before a
final newline, so a run id "<id>\\n" passed preflight and named a page "<id>\\n.html". The preflight
check of a run id the user passes and the workload names refuse a trailing newline (the bundle
schema's names: tests/unit/test_hostile_bundles.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
RUN_ID = "20261122T034500Z-a1b2c3"


def _load(relative: str):
    spec = importlib.util.spec_from_file_location(Path(relative).stem, PROJECT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("run_id", "accepted"), [(RUN_ID, True), (RUN_ID + "\n", False), ("\n" + RUN_ID, False),
                                                  (RUN_ID + "0", False)])
def test_preflight_takes_a_run_id_only_whole(run_id, accepted):
    # preflight's check of a run id the user passes (the action plugin's pattern, matched from the start)
    assert bool(_load("plugins/action/fleetscope_preflight.py").RUN_ID.match(run_id)) is accepted


def test_a_workload_name_with_a_final_newline_is_refused():
    module = _load("plugins/filter/workloads_input.py")
    problems = module.preflight_workload_problems([{"name": "gzip\n", "command": ["gzip", "-c", "/etc/hostname"]}])
    assert any("fleet_workloads[0].name='gzip\\n'" in problem for problem in problems)
    assert module.preflight_workload_problems([{"name": "gzip", "command": ["gzip", "-c", "/etc/hostname"]}]) == []
