"""Names must match their pattern whole (issue 14, finding 10): Python's `$` also matches before a
final newline, so a run id "<id>\\n" passed preflight and named a page "<id>\\n.html". The preflight
check of a run id the user passes and the workload names refuse a trailing newline (the bundle
schema's names: tests/unit/test_hostile_bundles.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

PROJECT = Path(__file__).resolve().parents[2]
RUN_ID = "20261122T034500Z-a1b2c3"


def _run_id_check() -> str:
    tasks = yaml.safe_load((PROJECT / "roles/preflight/tasks/main.yml").read_text())
    (task,) = [task for task in tasks if task.get("name") == "Check the run id a user passed in"]
    return task["ansible.builtin.assert"]["that"]


@pytest.mark.parametrize(("run_id", "accepted"), [(RUN_ID, True), (RUN_ID + "\n", False), ("\n" + RUN_ID, False),
                                                  (RUN_ID + "0", False)])
def test_preflight_takes_a_run_id_only_whole(run_id, accepted):
    templar = Templar(loader=DataLoader(), variables={"fleet_run_id": run_id})
    assert templar.template(trust_as_template("{{ " + _run_id_check() + " }}")) is accepted


def test_a_workload_name_with_a_final_newline_is_refused():
    spec = importlib.util.spec_from_file_location("workloads_input",
                                                  PROJECT / "plugins/filter/workloads_input.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    problems = module.preflight_workload_problems([{"name": "gzip\n", "command": ["gzip", "-c", "/etc/hostname"]}])
    assert any("fleet_workloads[0].name='gzip\\n'" in problem for problem in problems)
    assert module.preflight_workload_problems([{"name": "gzip", "command": ["gzip", "-c", "/etc/hostname"]}]) == []
