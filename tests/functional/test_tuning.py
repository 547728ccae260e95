"""The tuning module on this machine's real knobs: record first, idempotent apply, exact restore,
and playbooks/restore.yml after a run that never got to restore."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import BIN, PROJECT, STATE_FILE, knob_values, run_playbook

pytestmark = pytest.mark.functional

WANTED = {"thp_enabled": "always", "nr_hugepages": 4, "perf_event_paranoid": -1,
          "cpufreq_governor": "performance"}


def knob_module(action: str, *extra: str, knobs: dict | None = None) -> dict:
    args = json.dumps({"action": action, "state_file": STATE_FILE, "knobs": knobs or {}})
    proc = subprocess.run([str(BIN / "ansible"), "localhost", "-M", "roles/tuning/library",
                           "-m", "fleetscope_knob", "-a", args, "-o", *extra],
                          cwd=PROJECT, capture_output=True, text=True, check=False)
    assert "=> " in proc.stdout, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.split("=> ", 1)[1])
    result["rc"] = proc.returncode
    return result


def test_apply_twice_then_restore(knobs_unchanged):
    first = knob_module("apply", knobs=WANTED)
    assert first["rc"] == 0 and first["changed"]
    saved = json.loads(Path(STATE_FILE).read_text())
    assert saved["knobs"]["thp_enabled"]["values"]
    assert knob_values()["thp_enabled"] == "always"
    second = knob_module("apply", knobs=WANTED)
    assert second["rc"] == 0 and not second["changed"], "applying twice must report no change"
    governor = {k["name"]: k for k in second["knobs"]}["cpufreq_governor"]
    if not governor["available"]:
        assert governor["note"] and governor["applied"] is None
    restored = knob_module("restore")
    assert restored["rc"] == 0
    after = {k["name"]: k["after"] for k in restored["knobs"]}
    assert after["thp_enabled"] == knobs_unchanged["thp_enabled"]


def test_check_mode_apply_touches_nothing(knobs_unchanged):
    result = knob_module("apply", "--check", knobs=WANTED)
    assert result["rc"] == 0 and result["changed"]
    assert not os.path.exists(STATE_FILE)


def test_unknown_knob_is_refused(knobs_unchanged):
    result = knob_module("apply", knobs={"no_such_knob": 1})
    assert result["rc"] != 0 and "no_such_knob" in result["msg"]
    assert not os.path.exists(STATE_FILE)


def test_restore_playbook_after_an_unfinished_run(outputs, knobs_unchanged):
    """A run that died after tuning leaves the state file and changed knobs behind."""
    assert knob_module("apply", knobs=WANTED)["changed"]
    assert knob_values() != knobs_unchanged
    proc = run_playbook("playbooks/restore.yml", outputs)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_a_second_run_keeps_the_first_originals(knobs_unchanged):
    """A state file left by a crashed run is reused, never overwritten by tuned values."""
    knob_module("apply", knobs=WANTED)
    knob_module("apply", knobs=dict(WANTED, thp_enabled="never"))
    restored = knob_module("restore")
    assert {k["name"]: k["after"] for k in restored["knobs"]}["thp_enabled"] == knobs_unchanged["thp_enabled"]
