"""The tuning module on this machine's real knobs: record first, idempotent apply, exact restore, the
host's lock, and playbooks/restore.yml after a run that never got to restore (recovered) and while a
run still holds the host (left alone)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import BIN, PROJECT, STATE_FILE, knob_values, run_playbook, scratch_leftovers

pytestmark = pytest.mark.functional

WANTED = {"thp_enabled": "always", "nr_hugepages": 4, "perf_event_paranoid": -1,
          "cpufreq_governor": "performance"}
RUN_ID = "20261122T034500Z-a1b2c3"
MSR_STATE_FILE = "/var/lib/fleetscope/msr-prefetch-state.json"

_spec = importlib.util.spec_from_file_location("fleetscope_knob_plugin", PROJECT / "plugins/action/fleetscope_knob.py")
plugin = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plugin)
# This test process as the controller process of a run: alive for as long as the test runs.
ALIVE = plugin.run_owner()


def dead_owner() -> dict:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return dict(ALIVE, pid=proc.pid)


def flat(text: str) -> str:
    """Ansible's output with its line wrapping undone."""
    return " ".join(text.split())


def knob_module(action: str, *extra: str, knobs: dict | None = None, owner: dict | None = None,
                takeover: dict | None = None, **args) -> dict:
    """The module alone: ansible.cfg names plugins/action, whose fleetscope_knob would stand in for this test
    process as the run's owner, so the call is made with no action plugin path."""
    args = json.dumps({"action": action, "state_file": STATE_FILE, "knobs": knobs or {}, "run_id": RUN_ID,
                       "owner": owner or ALIVE, "takeover": takeover, **args})
    proc = subprocess.run([str(BIN / "ansible"), "localhost", "-M", "plugins/modules",
                           "-m", "fleetscope_knob", "-a", args, "-o", *extra],
                          cwd=PROJECT, env=dict(os.environ, ANSIBLE_ACTION_PLUGINS=str(PROJECT / "tests")),
                          capture_output=True, text=True, check=False)
    assert "=> " in proc.stdout, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.split("=> ", 1)[1])
    result["rc"] = proc.returncode
    return result


def test_apply_twice_then_restore_and_release(knobs_unchanged):
    first = knob_module("apply", knobs=WANTED)
    assert first["rc"] == 0 and first["changed"] and first["locked"]
    saved = json.loads(Path(STATE_FILE).read_text())
    assert saved["knobs"]["thp_enabled"]["values"] and saved["run_id"] == RUN_ID and saved["owner"] == ALIVE
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
    assert os.path.exists(STATE_FILE), "the lock stays until release"
    assert knob_module("release")["rc"] == 0


def test_check_mode_apply_touches_nothing(knobs_unchanged):
    result = knob_module("apply", "--check", knobs=WANTED)
    assert result["rc"] == 0 and result["changed"]
    assert not os.path.exists(STATE_FILE)


def test_unknown_knob_is_refused(knobs_unchanged):
    result = knob_module("apply", knobs={"no_such_knob": 1})
    assert result["rc"] != 0 and "no_such_knob" in result["msg"]
    assert not os.path.exists(STATE_FILE)


def test_restore_playbook_after_an_unfinished_run(outputs, knobs_unchanged):
    """A run that died after tuning leaves its lock, the state file and changed knobs behind."""
    assert knob_module("apply", knobs=WANTED, owner=dead_owner())["changed"]
    assert knob_values() != knobs_unchanged
    proc = run_playbook("playbooks/restore.yml", outputs)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert f"run {RUN_ID}:" in flat(proc.stdout)  # what was restored, and whose run it was


def test_restore_playbook_leaves_a_running_run_alone(outputs, knobs_unchanged):
    """While a run holds the host (here: this test process), restore.yml restores nothing and keeps
    that run's scratch directory, naming the run."""
    knob_module("apply", knobs=WANTED)
    tuned = knob_values()
    running_scratch = Path(f"/var/tmp/fleetscope-{RUN_ID}-running")
    running_scratch.mkdir(mode=0o700)
    try:
        proc = run_playbook("playbooks/restore.yml", outputs)
        assert proc.returncode != 0
        assert (f"localhost is in use by run {RUN_ID} (ansible-playbook pid {os.getpid()} on controller "
                f"{ALIVE['controller']}") in flat(proc.stdout)
        assert "still running" in proc.stdout
        assert knob_values() == tuned and os.path.exists(STATE_FILE) and running_scratch.is_dir()
    finally:
        knob_module("recover")
        running_scratch.rmdir()


def test_a_second_run_gets_the_holder_and_a_dead_one_s_originals_are_kept(knobs_unchanged):
    """A run on a host another holds changes nothing; the lock of a dead run is taken over with the
    dead run's originals, never the values it tuned."""
    knob_module("apply", knobs=WANTED, owner=dead_owner())
    refused = knob_module("apply", knobs=dict(WANTED, thp_enabled="never"))
    assert refused["rc"] == 0 and not refused["changed"] and refused["held_by"]["run_id"] == RUN_ID
    assert knob_values()["thp_enabled"] == "always"
    taken = knob_module("apply", knobs=dict(WANTED, thp_enabled="never"), takeover=refused["held_by"])
    assert taken["took_over"] == refused["held_by"]
    assert {k["name"]: k["before"] for k in taken["knobs"]}["thp_enabled"] == knobs_unchanged["thp_enabled"]
    restored = knob_module("recover")
    assert {k["name"]: k["after"] for k in restored["knobs"]}["thp_enabled"] == knobs_unchanged["thp_enabled"]


def test_restore_playbook_names_a_corrupt_msr_state_file(outputs, knobs_unchanged):
    """The prefetchers' saved MSR values, truncated: restore.yml says which file and how to recover,
    and writes no MSR."""
    Path(MSR_STATE_FILE).parent.mkdir(mode=0o700, exist_ok=True)
    Path(MSR_STATE_FILE).write_text('{"msr": 420, "values": {"0": 7')
    try:
        proc = run_playbook("playbooks/restore.yml", outputs)
        assert proc.returncode != 0
        assert f"{MSR_STATE_FILE} cannot be read as saved prefetcher MSR values (JSONDecodeError" in flat(proc.stdout)
        assert "A power cycle or reboot re-enables them" in flat(proc.stdout)
        assert "Traceback" not in proc.stdout
    finally:
        os.unlink(MSR_STATE_FILE)
    assert not scratch_leftovers()


def knob_action(action: str, *, knobs: dict | None = None, **extra) -> dict:
    """The module through its action plugin (ansible.cfg's plugins/action), as the tuning role calls it: the ad hoc
    ansible process is the run's owner."""
    args = json.dumps({"action": action, "state_file": STATE_FILE, "knobs": knobs or {}, "run_id": RUN_ID, **extra})
    proc = subprocess.run([str(BIN / "ansible"), "localhost", "-m", "fleetscope_knob", "-a", args, "-o"],
                          cwd=PROJECT, capture_output=True, text=True, check=False)
    assert "=> " in proc.stdout, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.split("=> ", 1)[1])
    result["rc"] = proc.returncode
    return result


def test_apply_notes_the_start_and_creates_the_scratch_directory_under_the_lock(knobs_unchanged):
    """One task a host: the lock, the knobs, when measuring started and the run's scratch directory with its
    folders; release removes that directory."""
    applied = knob_action("apply", knobs=WANTED, fact="fleet_knobs", started_fact="fleet_started_at",
                          create_scratch={"root": "/var/tmp", "folders": ["kernels", "bundle/raw"]})
    assert applied["rc"] == 0 and applied["locked"], applied
    facts = applied["ansible_facts"]
    scratch = Path(facts["fleet_scratch_dir"])
    assert scratch.parent == Path("/var/tmp") and scratch.name.startswith(f"fleetscope-{RUN_ID}-")
    assert (scratch / "bundle" / "raw").is_dir() and (scratch.stat().st_mode & 0o777) == 0o700
    assert facts["fleet_started_at"].endswith("Z") and facts["fleet_knobs"] == applied["knobs"]
    assert facts["fleet_hugepages_free"] is not None
    assert knob_values()["thp_enabled"] == "always"
    owner = json.loads(Path(STATE_FILE).read_text())["owner"]  # the ad hoc process that applied: its lock
    assert knob_module("restore", owner=owner)["rc"] == 0
    assert knob_module("release", owner=owner, scratch=str(scratch))["rc"] == 0
    assert not scratch.exists() and not os.path.exists(STATE_FILE)


def test_a_scratch_directory_that_cannot_be_made_fails_tune_with_the_lock_kept_for_restore(tmp_path, knobs_unchanged):
    """The knobs are applied before the scratch directory is made: when it cannot be (a root other users can write
    to), the task fails naming the root, and its result still says the lock is held, so the role restores."""
    root = tmp_path / "open"
    root.mkdir()
    root.chmod(0o777)
    applied = knob_action("apply", knobs=WANTED, started_fact="fleet_started_at", create_scratch={"root": str(root)})
    assert applied["rc"] != 0 and applied["locked"], applied
    assert f"fleet_scratch_root={root}" in applied["msg"] and "ansible_facts" not in applied
    assert os.path.exists(STATE_FILE) and knob_values()["thp_enabled"] == "always"
    restored = knob_action("recover")  # the ad hoc process that applied is gone: a dead run's lock
    assert {k["name"]: k["after"] for k in restored["knobs"]}["thp_enabled"] == knobs_unchanged["thp_enabled"]
    assert not os.path.exists(STATE_FILE) and not list(root.iterdir())
