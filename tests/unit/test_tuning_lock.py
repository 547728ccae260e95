"""The tuning role's per-host lock, on files of this test's own:
  * the module (plugins/modules/fleetscope_knob.py) on private knob files: the lock names its run,
    a second run gets the holder back and changes nothing, a dead holder's lock is taken over only if
    it is still the holder, restore/release act on their own lock only, and a corrupt, truncated or
    incomplete state file stops it with the file, the problem and the recovery named;
  * the action plugin's judgement of a holder: alive, dead (its process gone, its pid reused, the
    controller rebooted) or unknown (another controller), and the refusal it writes."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


def load(relative: str):
    spec = importlib.util.spec_from_file_location(Path(relative).stem + "_under_test", PROJECT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


knob = load("plugins/modules/fleetscope_knob.py")
plugin = load("plugins/action/fleetscope_knob.py")

RUN_A, RUN_B = "20261122T034500Z-aaaaaa", "20261122T050000Z-bbbbbb"


class Failed(Exception):
    pass


class Module:
    """The part of AnsibleModule the actions use: params, check_mode, fail_json."""

    def __init__(self, **params):
        self.params = {"knobs": {}, "run_id": "", "owner": None, "takeover": None, **params}
        self.check_mode = False

    def fail_json(self, msg, **result):
        raise Failed(msg)


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def owner(pid: int | None = None) -> dict:
    me = plugin.run_owner()
    if pid is not None:
        me.update(pid=pid, pid_start=plugin.process_start(pid) or 12345)
    return me


@pytest.fixture
def host(tmp_path, monkeypatch):
    """Private knob files (THP's in the kernel's format) and a state file path."""
    files = {"thp_enabled": ("always [madvise] never", "madvise"), "nr_hugepages": ("0", "0"),
             "perf_event_paranoid": ("2", "2")}
    paths = {}
    for name, (text, _) in files.items():
        paths[name] = tmp_path / "knobs" / name
        paths[name].parent.mkdir(exist_ok=True)
        paths[name].write_text(text + "\n")
    monkeypatch.setattr(knob, "KNOB_FILES", {**{name: str(path) for name, path in paths.items()},
                                             "cpufreq_governor": str(tmp_path / "no-cpufreq" / "*")})
    state_file = tmp_path / "state" / "tuning-state.json"
    return {"paths": paths, "state_file": state_file, "originals": {n: v for n, (_, v) in files.items()}}


def knob_values(host) -> dict:
    return {name: knob.read_value(str(path)) for name, path in host["paths"].items()}


def run(action: str, host, run_id: str, run_owner: dict, takeover=None, **knobs) -> dict:
    module = Module(action=action, state_file=str(host["state_file"]), run_id=run_id, owner=run_owner,
                    takeover=takeover, knobs=knobs)
    if action == "apply":
        return knob.apply(module)
    if action == "release":
        return knob.release(module)
    return knob.restore(module, release=action == "recover")


def test_the_lock_names_its_run_and_a_second_run_changes_nothing(host):
    first = owner()
    applied = run("apply", host, RUN_A, first, thp_enabled="always", nr_hugepages=4)
    assert applied["locked"] and knob_values(host)["thp_enabled"] == "always"
    state = json.loads(host["state_file"].read_text())
    assert state["run_id"] == RUN_A and state["owner"] == first
    assert stat.S_IMODE(host["state_file"].parent.stat().st_mode) == 0o700

    second = run("apply", host, RUN_B, owner(dead_pid()), thp_enabled="never", nr_hugepages=8)
    assert second["held_by"] == {"run_id": RUN_A, "owner": first, "locked_at": state["locked_at"]}
    assert "locked" not in second
    assert knob_values(host) == {"thp_enabled": "always", "nr_hugepages": "4", "perf_event_paranoid": "2"}
    for action in ("restore", "release", "recover"):  # not its lock: nothing happens
        assert run(action, host, RUN_B, owner(dead_pid()))["held_by"]["run_id"] == RUN_A
    assert json.loads(host["state_file"].read_text()) == state

    restored = run("restore", host, RUN_A, first)
    assert knob_values(host) == host["originals"]
    assert {k["name"]: (k["before"], k["applied"], k["after"]) for k in restored["knobs"]}["thp_enabled"] == (
        "madvise", "always", "madvise")
    assert host["state_file"].exists(), "restore keeps the lock until release"
    run("release", host, RUN_A, first)
    assert not host["state_file"].exists()
    assert os.listdir(host["state_file"].parent) == []  # no temporary file left


def test_release_removes_the_run_s_own_scratch_directory_first_and_releases_the_lock_whatever_it_finds(
        host, tmp_path):
    """Release takes the run's scratch directory with it, in the same call (it was a task of its own): only a
    folder named as the run's, never what a link points to; a folder it will not or cannot remove fails the call
    with the folder named, and the lock is released all the same (the knobs were restored before)."""
    def release(scratch: Path, run_id: str = RUN_A) -> str | None:
        first = owner()
        run("apply", host, run_id, first)
        module = Module(action="release", state_file=str(host["state_file"]), run_id=run_id, owner=first,
                        scratch=str(scratch))
        try:
            knob.release(module)
            message = None
        except Failed as failure:
            message = str(failure)
        assert not host["state_file"].exists(), "the lock is released whatever became of the scratch directory"
        return message

    own = tmp_path / f"fleetscope-{RUN_A}-k2v9x0"
    (own / "kernels" / "build").mkdir(parents=True)
    (own / "kernels" / "build" / "fleetscope-kernels").write_text("binary")
    assert release(own) is None and not own.exists()
    assert release(own) is None, "a folder already gone is nothing to do"

    other = tmp_path / f"fleetscope-{RUN_B}-a1b2c3"
    other.mkdir()
    assert "is not a scratch directory of run" in release(other) and other.exists()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("x")
    link = tmp_path / f"fleetscope-{RUN_A}-link00"
    link.symlink_to(victim)
    assert "is not a folder: left alone" in release(link)
    assert (victim / "keep").exists() and link.is_symlink()


def test_a_dead_holder_s_lock_is_taken_over_with_its_originals(host):
    dead = owner(dead_pid())
    run("apply", host, RUN_A, dead, thp_enabled="always")
    held_by = run("apply", host, RUN_B, owner(), thp_enabled="never")["held_by"]
    taken = run("apply", host, RUN_B, owner(), takeover=held_by, thp_enabled="never")
    assert taken["took_over"]["run_id"] == RUN_A
    before = {k["name"]: k["before"] for k in taken["knobs"]}
    assert before["thp_enabled"] == "madvise", "the dead run's originals, not its tuned value"
    assert json.loads(host["state_file"].read_text())["run_id"] == RUN_B
    run("recover", host, RUN_B, owner())
    assert knob_values(host) == host["originals"] and not host["state_file"].exists()


def test_a_takeover_of_a_holder_that_changed_meanwhile_changes_nothing(host):
    run("apply", host, RUN_A, owner(dead_pid()), thp_enabled="always")
    stale_view = run("apply", host, RUN_B, owner(), thp_enabled="never")["held_by"]
    # another run took the lock over between our look and our takeover
    run("apply", host, "20261122T060000Z-cccccc", owner(), takeover=stale_view, thp_enabled="always")
    again = run("apply", host, RUN_B, owner(), takeover=stale_view, thp_enabled="never")
    assert again["held_by"]["run_id"] == "20261122T060000Z-cccccc"
    assert knob_values(host)["thp_enabled"] == "always"


def test_restore_playbook_recovers_a_dead_run_s_lock(host):
    dead = owner(dead_pid())
    run("apply", host, RUN_A, dead, thp_enabled="always", perf_event_paranoid=-1)
    held_by = run("recover", host, "", owner())["held_by"]
    assert plugin.holder_state(held_by["owner"], owner()) == "dead"
    recovered = run("recover", host, "", owner(), takeover=held_by)
    assert recovered["took_over"]["run_id"] == RUN_A
    assert knob_values(host) == host["originals"] and not host["state_file"].exists()


TRUNCATED = '{"run_id": "20261122T034500Z-aaaaaa", "knobs": {"thp_enabled": {"name": "thp_en'
BROKEN = {
    "truncated": (TRUNCATED, "is not complete JSON (Unterminated string starting at: line 1 column 73 (char 72); truncated or corrupt)"),
    "empty": ("", "is not complete JSON (Expecting value: line 1 column 1 (char 0); truncated or corrupt)"),
    "not an object": ("[1, 2]", "is incomplete: it holds no JSON object"),
    "no run id": ('{"knobs": {}}', "is incomplete: it has no run_id"),
    "no knobs": ('{"run_id": "x"}', "is incomplete: it has no knobs"),
    "a knob missing": ('{"run_id": "x", "knobs": {}}', "is incomplete: it has no record of knob thp_enabled"),
    "a knob without values": (
        '{"run_id": "x", "knobs": {"thp_enabled": {"available": true}}}',
        "it has no valid original value of knob thp_enabled (knobs.thp_enabled.available/values)"),
    "an owner without pid": (
        '{"run_id": "x", "owner": {"controller": "c", "controller_id": "m", "boot_id": "b"}, "knobs": {}}',
        "is incomplete: it has no valid owner.pid"),
    "not UTF-8": (b"\xff\xfe{", "cannot be read ("),
}


@pytest.mark.parametrize("content, problem", BROKEN.values(), ids=BROKEN.keys())
@pytest.mark.parametrize("action", ["apply", "restore", "release", "recover"])
def test_a_state_file_that_cannot_be_trusted_is_named_with_the_recovery(host, content, problem, action):
    host["state_file"].parent.mkdir()
    if isinstance(content, bytes):
        host["state_file"].write_bytes(content)
    else:
        host["state_file"].write_text(content)
    before = host["state_file"].read_bytes()
    with pytest.raises(knob.StateError) as error:
        run(action, host, RUN_A, owner(), thp_enabled="always")
    message = str(error.value)
    assert message.startswith(f"{host['state_file']} ") and problem in message
    assert "nothing was changed" in message and f"then delete {host['state_file']}" in message
    assert str(host["paths"]["nr_hugepages"]) in message  # the knobs to check by hand
    assert host["state_file"].read_bytes() == before and knob_values(host) == host["originals"]


def test_a_holder_is_alive_dead_or_unknown():
    me = plugin.run_owner()
    assert me["pid"] == os.getpid() and me["pid_start"] is not None
    assert plugin.holder_state(me, me) == "alive"
    assert plugin.holder_state(owner(dead_pid()), me) == "dead"
    assert plugin.holder_state(dict(me, pid_start=me["pid_start"] + 1), me) == "dead"  # the pid was reused
    assert plugin.holder_state(dict(me, boot_id="another boot"), me) == "dead"  # the controller rebooted
    assert plugin.holder_state(dict(me, controller_id="another machine"), me) == "unknown"
    assert plugin.holder_state(None, me) == "unknown"  # a state file of an older fleetscope


def test_the_refusal_names_the_holder_and_how_to_recover():
    held_by = {"run_id": RUN_A, "locked_at": "2026-11-22T03:46:00Z",
               "owner": {"controller": "ctl01", "controller_id": "m", "boot_id": "b", "pid": 4242, "pid_start": 1}}
    alive = plugin.refusal("node1", held_by, "alive", "/var/lib/fleetscope/tuning-state.json", "apply")
    assert (f"node1 is in use by run {RUN_A} (ansible-playbook pid 4242 on controller ctl01, since "
            "2026-11-22T03:46:00Z): /var/lib/fleetscope/tuning-state.json is its lock") in alive
    assert "still running: wait for it to finish" in alive and "Nothing on node1 was changed" in alive
    recovering = plugin.refusal("node1", held_by, "alive", "/var/lib/fleetscope/tuning-state.json", "recover")
    assert "leaves the knobs and the scratch directory of a running run alone" in recovering
    unknown = plugin.refusal("node1", held_by, "unknown", "/var/lib/fleetscope/tuning-state.json", "apply")
    assert "cannot tell whether that run still runs (it was started from ctl01)" in unknown
    assert unknown.endswith(f"ansible-playbook playbooks/restore.yml --limit node1 -e tuning_break_lock={RUN_A}")
