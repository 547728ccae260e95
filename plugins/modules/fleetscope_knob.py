#!/usr/bin/python
"""Record, apply and restore the kernel knobs that disturb memory measurements, under a per-host lock.

The state file is the host's lock and the record of its original knob values: `apply` creates it,
naming the run that holds the host (run id, and the controller process that runs it), BEFORE any
knob is changed; `restore` puts each knob back from it and verifies it by reading it back; `release`
deletes it when the run is done with the host. While it exists no other run tunes the host: `apply`
and `recover` on a host held by another run change nothing and return the holder (`held_by`), and the
action plugin of the same name, on the controller, decides whether that run is dead (its lock can be
taken over, keeping its originals) or must be waited for. Every step on the file runs under an
exclusive flock of its folder, and every write is atomic (temporary file, fsync, rename, fsync of the
folder). A file that cannot be trusted (corrupt, truncated, incomplete) stops the module with the
file, the problem and the recovery named; nothing is changed then.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_knob
short_description: Record, apply and restore measurement knobs (THP, hugepages, governor, ...) under a host lock
author:
  - fleetscope maintainers (@fleetscope)
description:
  - Knobs are named; each maps to one or more sysfs/procfs files on the host.
  - C(action=apply) takes the host's lock and records every known knob's original value in
    O(state_file), then writes the requested values. A lock already held by O(owner) (or by the holder
    named in O(takeover)) is reused with its originals; one held by anyone else is returned as
    C(held_by) and nothing is changed.
  - C(action=restore) writes the recorded originals back and verifies them; the lock stays.
  - C(action=release) removes O(state_file), the lock; with O(scratch), the run's scratch directory first.
  - C(action=recover) is restore and release at once, for a run that will never do them itself.
  - C(restore), C(release) and C(recover) act only on a lock held by O(owner) or by O(takeover).
  - C(action=probe) only reads; it never changes anything.
  - A knob the host lacks is reported with C(available=false) and a note; it is not an error.
  - Its action plugin, on the controller, takes arguments the module never sees - C(break_lock) (the run id of
    a lock held by another controller's run that is known to be over), C(fact) (keep RV(knobs) as the host's
    fact of that name where the call returns any), apply's C(started_fact) (a fact set to the time the call began)
    and C(create_scratch) (C(root) and C(folders) of the run's scratch directory, made under the lock just taken by
    M(fleetscope.fleet.fleetscope_scratch), whose facts it passes on; a failure fails the task with RV(locked)
    kept true), and release's C(stage_error) (fail the task with it, naming the host, once the host is
    released) - and turns apply's RV(took_over) into a warning.
options:
  action:
    description: What to do.
    type: str
    choices: [apply, restore, release, recover, probe]
    required: true
  state_file:
    description: JSON file holding the lock and the original values.
    type: path
    required: true
  knobs:
    description: Knob name to desired value; null leaves the knob as it is (only recorded).
    type: dict
    default: {}
  run_id:
    description: The run taking or holding the lock.
    type: str
    default: ""
  owner:
    description: The controller process of the run (controller, controller_id, boot_id, pid, pid_start).
    type: dict
  takeover:
    description: The C(held_by) of a holder judged dead; its lock is taken over only if it is still the holder.
    type: dict
  scratch:
    description:
      - With C(action=release), the run's scratch directory (C(fleet_scratch_dir)), removed before the lock is
        released, while no other run can use the host. Only a folder of this run (named
        C(fleetscope-<run_id>-...)) is removed; anything else fails the task, as does a folder that cannot be
        removed, but either way the lock is released (the knobs were restored before).
    type: path
"""

EXAMPLES = r"""
- name: Take the host's lock, record the knobs and apply the profile
  fleetscope.fleet.fleetscope_knob:
    action: apply
    state_file: /var/lib/fleetscope/tuning-state.json
    run_id: 20261122T034500Z-a1b2c3
    knobs:
      thp_enabled: always
      nr_hugepages: 0

- name: Put every knob back and verify it
  fleetscope.fleet.fleetscope_knob:
    action: restore
    state_file: /var/lib/fleetscope/tuning-state.json
    run_id: 20261122T034500Z-a1b2c3

- name: Remove the run's scratch directory, then release the host
  fleetscope.fleet.fleetscope_knob:
    action: release
    state_file: /var/lib/fleetscope/tuning-state.json
    run_id: 20261122T034500Z-a1b2c3
    scratch: /var/tmp/fleetscope-20261122T034500Z-a1b2c3-k2v9x0

- name: Read the knobs without changing anything
  fleetscope.fleet.fleetscope_knob:
    action: probe
    state_file: /var/lib/fleetscope/tuning-state.json
"""

RETURN = r"""
knobs:
  description: One entry per known knob with name, path, available, before, applied, after, note.
  type: list
  returned: always
held_by:
  description: The run that holds the host (run_id, owner, locked_at) when it is not this one; nothing was done.
  type: dict
  returned: when another run holds the host
took_over:
  description: The dead run whose lock apply or recover took over.
  type: dict
  returned: when a lock was taken over
locked:
  description: This run holds the host's lock now (apply; also when it failed after taking it).
  type: bool
  returned: by apply when it took or held the lock
"""

import fcntl
import glob
import json
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager

from ansible.module_utils.basic import AnsibleModule


THP = "/sys/kernel/mm/transparent_hugepage"

# name -> glob of files; a multi-file knob (per-CPU governor) must hold one value everywhere.
KNOB_FILES = {
    "thp_enabled": THP + "/enabled",
    "thp_defrag": THP + "/defrag",
    "nr_hugepages": "/proc/sys/vm/nr_hugepages",
    "perf_event_paranoid": "/proc/sys/kernel/perf_event_paranoid",
    "cpufreq_governor": "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor",
    "cpufreq_boost": "/sys/devices/system/cpu/cpufreq/boost",
    "intel_no_turbo": "/sys/devices/system/cpu/intel_pstate/no_turbo",
}

UNAVAILABLE_NOTES = {
    "cpufreq_governor": "no cpufreq driver on this host (common in VMs): governor not settable",
    "cpufreq_boost": "no cpufreq boost control on this host",
    "intel_no_turbo": "no intel_pstate driver on this host",
}

# What the controller records about the process that runs a run (see the action plugin).
OWNER_FIELDS = {"controller": (str,), "controller_id": (str,), "boot_id": (str, type(None)), "pid": (int,),
                "pid_start": (int, type(None))}

_SELECTED = re.compile(r"\[([^\]]+)\]")


class StateError(Exception):
    """A state file that cannot be trusted; the message names the file, the problem and the recovery."""

    def __init__(self, path: str, problem: str):
        super().__init__(
            f"{path} {problem}. It is this host's tuning lock and the record of the original knob values "
            f"of the run that tuned it, so nothing was changed. Its values cannot be trusted: compare "
            f"{', '.join(KNOB_FILES.values())} with this host's usual values and set them back by hand (a "
            f"reboot also resets them; `cat {path}` shows what the file still holds), then delete {path}.")


def read_value(path: str) -> str:
    with open(path, encoding="ascii") as handle:
        text = handle.read().strip()
    # THP files list every choice with the active one in brackets: "always [madvise] never".
    match = _SELECTED.search(text)
    return match.group(1) if match else text


def write_value(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(value)


def set_files(values: dict, check_mode: bool) -> tuple[bool, list[str]]:
    """Write each path's value where it differs. Returns (changed, errors)."""
    changed, errors = False, []
    for path, value in values.items():
        if read_value(path) == value:
            continue
        changed = True
        if not check_mode:
            try:
                write_value(path, value)
            except OSError as err:
                errors.append(f"{path}: {err}")
    return changed, errors


def knob_paths(name: str) -> list[str]:
    return sorted(glob.glob(KNOB_FILES[name]))


def read_knob(name: str) -> dict:
    paths = knob_paths(name)
    if not paths:
        return {"name": name, "path": None, "available": False, "values": {},
                "note": UNAVAILABLE_NOTES.get(name, "not present on this host")}
    return {"name": name, "path": KNOB_FILES[name], "available": True,
            "values": {path: read_value(path) for path in paths}, "note": None}


def summary(values: dict) -> str | None:
    """One string for a knob that may span several files (the per-CPU governor)."""
    distinct = sorted(set(values.values()))
    if not distinct:
        return None
    if len(distinct) == 1:
        return distinct[0]
    return ",".join(f"{os.path.basename(os.path.dirname(os.path.dirname(p)))}={v}"
                    for p, v in sorted(values.items()))


def knob_record(original: dict, applied: str | None = None, after: str | None = None) -> dict:
    """A knob as the manifest reports it: its original value, the value applied, the value after."""
    return {"name": original["name"], "path": original["path"], "available": original["available"],
            "before": summary(original["values"]), "applied": applied, "after": after,
            "note": original["note"]}


# --- the state file ----------------------------------------------------------------------------------
def _state_problem(state) -> str | None:
    """What makes a parsed state file unusable, or None."""
    if not isinstance(state, dict):
        return "holds no JSON object"
    if not isinstance(state.get("run_id"), str):
        return "has no run_id"
    owner = state.get("owner")
    if owner is not None:
        if not isinstance(owner, dict):
            return "has an owner that is not an object"
        for field, types in OWNER_FIELDS.items():
            if not isinstance(owner.get(field), types) or isinstance(owner.get(field), bool):
                return f"has no valid owner.{field}"
    knobs = state.get("knobs")
    if not isinstance(knobs, dict):
        return "has no knobs"
    for name in KNOB_FILES:
        knob = knobs.get(name)
        if not isinstance(knob, dict):
            return f"has no record of knob {name}"
        if not isinstance(knob.get("available"), bool) or not isinstance(knob.get("values"), dict) \
                or not all(isinstance(v, str) for v in knob["values"].values()):
            return f"has no valid original value of knob {name} (knobs.{name}.available/values)"
        if knob["available"] and not knob["values"]:
            return f"has no original value of knob {name}, recorded as available"
    if not isinstance(state.get("applied", {}), dict):
        return "has an 'applied' record that is not an object"
    return None


def load_state(path: str) -> dict | None:
    """The state file checked, or None when there is none. Raises StateError for one that cannot be
    trusted."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise StateError(path, f"cannot be read ({error})") from None
    try:
        state = json.loads(text)
    except json.JSONDecodeError as error:
        raise StateError(path, f"is not complete JSON ({error}; truncated or corrupt)") from None
    problem = _state_problem(state)
    if problem:
        raise StateError(path, f"is incomplete: it {problem}")
    return state


def save_state(state_file: str, state: dict) -> None:
    """Atomic: a reader sees the old file or the new one, whole, even after a crash or power loss."""
    directory = os.path.dirname(state_file) or "."
    handle, tmp = tempfile.mkstemp(dir=directory, prefix=".state-")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(state, out, indent=2, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, state_file)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    sync_folder(directory)


def remove_state(state_file: str) -> None:
    os.remove(state_file)
    sync_folder(os.path.dirname(state_file) or ".")


def sync_folder(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def exclusive(state_file: str, check_mode: bool):
    """One fleetscope_knob at a time per host: an exclusive flock of the state file's folder, held
    while the lock is read and written."""
    directory = os.path.dirname(state_file) or "."
    if check_mode and not os.path.isdir(directory):
        yield
        return
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def holder(state: dict) -> dict:
    return {"run_id": state["run_id"], "owner": state.get("owner"), "locked_at": state.get("locked_at")}


def ours(state: dict, params: dict) -> bool:
    return state["run_id"] == params["run_id"] and state.get("owner") == params["owner"]


def may_act(state: dict, params: dict) -> bool:
    """This run holds the lock, or the controller judged the holder dead and it still is the holder."""
    return ours(state, params) or (params["takeover"] is not None and params["takeover"] == holder(state))


# --- actions -----------------------------------------------------------------------------------------
def apply(module: AnsibleModule) -> dict:
    params, state_file = module.params, module.params["state_file"]
    wanted = {k: v for k, v in params["knobs"].items() if v is not None}
    unknown = sorted(set(params["knobs"]) - set(KNOB_FILES))
    if unknown:
        module.fail_json(msg=f"unknown knob(s) {unknown}; known: {sorted(KNOB_FILES)}")

    with exclusive(state_file, module.check_mode):
        state = load_state(state_file)
        if state is not None and not may_act(state, params):
            return {"changed": False, "knobs": [], "held_by": holder(state)}
        took_over = holder(state) if state is not None and not ours(state, params) else None
        changed = state is None or took_over is not None
        if changed:
            # A dead run's originals are kept: the knobs may still hold its tuned values.
            state = state or {"knobs": {name: read_knob(name) for name in KNOB_FILES}}
            state.update(run_id=params["run_id"], owner=params["owner"],
                         locked_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            if not module.check_mode:
                save_state(state_file, state)

        result = []
        for name in KNOB_FILES:
            original = state["knobs"][name]
            entry = knob_record(original)
            if name in wanted and original["available"]:
                value = str(wanted[name])
                wrote, errors = set_files(dict.fromkeys(knob_paths(name), value), module.check_mode)
                changed = changed or wrote
                if errors:
                    module.fail_json(msg=f"cannot set {name} to {value!r}: {'; '.join(errors)}; "
                                         f"originals are saved in {state_file}", knobs=result, locked=True)
                current = read_knob(name)["values"]
                entry["applied"] = summary(current) if not module.check_mode else value
                if not module.check_mode and entry["applied"] != value:
                    # nr_hugepages may be granted only in part (fragmented memory): record what is.
                    entry["note"] = f"requested {value}, kernel granted {entry['applied']}"
            elif name in wanted:
                entry["note"] = f"{original['note']}; requested {wanted[name]} not applied"
            result.append(entry)
        applied = {entry["name"]: entry["applied"] for entry in result}
        if not module.check_mode and state.get("applied") != applied:
            # Kept beside the originals so a restore, even after a crash, can report all three values.
            state["applied"] = applied
            save_state(state_file, state)
    outcome = {"changed": changed, "knobs": result, "locked": not module.check_mode}
    if took_over:
        outcome["took_over"] = took_over
    return outcome


def nothing_to_do(state: dict | None, params: dict) -> dict | None:
    """restore's and release's outcome when the host holds nothing of this run's to act on: no state
    file, or another live run's; None when they may act."""
    if state is None:
        return {"changed": False, "knobs": []}
    if not may_act(state, params):
        return {"changed": False, "knobs": [], "held_by": holder(state)}
    return None


def restore(module: AnsibleModule, release: bool) -> dict:
    params, state_file = module.params, module.params["state_file"]
    with exclusive(state_file, module.check_mode):
        state = load_state(state_file)
        if (nothing := nothing_to_do(state, params)) is not None:
            return nothing
        changed, result, mismatches = False, [], []
        for name, original in state["knobs"].items():
            wrote, errors = set_files(original["values"], module.check_mode)
            changed = changed or wrote
            mismatches += [f"{name} at {error}" for error in errors]
            after = read_knob(name)["values"] if original["available"] else {}
            if not module.check_mode and after != original["values"]:
                mismatches.append(f"{name}: wanted {summary(original['values'])}, reads {summary(after)}")
            result.append(knob_record(original, state.get("applied", {}).get(name), summary(after)))
        if mismatches:
            module.fail_json(msg="restore incomplete, state file kept at " + state_file + ": "
                                 + "; ".join(mismatches), knobs=result)
        if release and not module.check_mode:
            remove_state(state_file)
    outcome = {"changed": changed or release, "knobs": result}
    if not ours(state, params):
        outcome["took_over"] = holder(state)
    return outcome


def remove_scratch(path: str, run_id: str) -> str | None:
    """Remove the run's scratch directory `path`: None, or why it was not removed. Only a real folder named as
    fleetscope_scratch names this run's (fleetscope-<run_id>-...) is removed, never what a link points to."""
    if not run_id or not os.path.basename(os.path.normpath(path)).startswith(f"fleetscope-{run_id}-"):
        return f"{path} is not a scratch directory of run {run_id!r} (fleetscope-{run_id}-...): left alone"
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            return None if not os.path.lexists(path) else f"{path} is not a folder: left alone"
        shutil.rmtree(path)
    except OSError as error:
        return f"cannot remove {path}: {error}"
    return None


def release(module: AnsibleModule) -> dict:
    params, state_file = module.params, module.params["state_file"]
    problem = None
    with exclusive(state_file, module.check_mode):
        state = load_state(state_file)
        if (nothing := nothing_to_do(state, params)) is not None:
            return nothing
        if not module.check_mode:
            if params.get("scratch"):
                problem = remove_scratch(params["scratch"], params["run_id"])
            remove_state(state_file)
    if problem:
        module.fail_json(msg=f"the lock is released, but the scratch directory was not removed: {problem}",
                         changed=True, knobs=[])
    return {"changed": True, "knobs": []}


def probe(module: AnsibleModule) -> dict:
    state = load_state(module.params["state_file"])
    outcome = {"changed": False, "knobs": [knob_record(read_knob(name)) for name in KNOB_FILES]}
    if state is not None:
        outcome["held_by"] = holder(state)
    return outcome


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "action": {"type": "str", "required": True, "choices": ["apply", "restore", "release", "recover", "probe"]},
            "state_file": {"type": "path", "required": True},
            "knobs": {"type": "dict", "default": {}},
            "run_id": {"type": "str", "default": ""},
            "owner": {"type": "dict"},
            "takeover": {"type": "dict"},
            "scratch": {"type": "path"},
        },
        required_if=[("action", action, ["owner"]) for action in ("apply", "restore", "release", "recover")],
        supports_check_mode=True,
    )
    actions = {"apply": apply, "restore": lambda m: restore(m, release=False), "release": release,
               "recover": lambda m: restore(m, release=True), "probe": probe}
    try:
        module.exit_json(**actions[module.params["action"]](module))
    except StateError as error:
        module.fail_json(msg=str(error), knobs=[])


if __name__ == "__main__":
    main()
