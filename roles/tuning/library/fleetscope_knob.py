#!/usr/bin/python
"""Record, apply and restore the kernel knobs that disturb memory measurements.

The original value of every knob is written to a state file on the host BEFORE anything is
changed; restore puts each one back from that file, verifies it by reading it back, and only then
deletes the file. A state file left by a crashed run is never overwritten, so its originals win.
"""

from __future__ import annotations

import glob
import json
import os
import re
import tempfile

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: fleetscope_knob
short_description: Record, apply and restore measurement knobs (THP, hugepages, governor, ...)
description:
  - Knobs are named; each maps to one or more sysfs/procfs files on the host.
  - C(action=apply) records every known knob's original value in O(state_file) (unless the file
    already exists from an interrupted run), then writes the requested values.
  - C(action=restore) writes the recorded originals back, verifies them and removes O(state_file).
  - C(action=probe) only reads; it never changes anything.
  - A knob the host lacks is reported with C(available=false) and a note; it is not an error.
options:
  action:
    description: What to do.
    type: str
    choices: [apply, restore, probe]
    required: true
  state_file:
    description: JSON file holding the original values.
    type: path
    required: true
  knobs:
    description: Knob name to desired value; null leaves the knob as it is (only recorded).
    type: dict
    default: {}
  run_id:
    description: Recorded in the state file so a later restore can say which run it undoes.
    type: str
    default: ""
"""

RETURN = r"""
knobs:
  description: One entry per known knob with name, path, available, before, applied, after, note.
  type: list
  returned: always
state_file_existed:
  description: True when a state file from an earlier, unfinished run was found and reused.
  type: bool
  returned: always
"""

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

_SELECTED = re.compile(r"\[([^\]]+)\]")


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


def save_state(state_file: str, state: dict) -> None:
    directory = os.path.dirname(state_file) or "."
    os.makedirs(directory, mode=0o700, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=directory, prefix=".state-")
    with os.fdopen(handle, "w") as out:
        json.dump(state, out, indent=2, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, state_file)


def apply(module: AnsibleModule) -> dict:
    state_file = module.params["state_file"]
    wanted = {k: v for k, v in module.params["knobs"].items() if v is not None}
    unknown = sorted(set(module.params["knobs"]) - set(KNOB_FILES))
    if unknown:
        module.fail_json(msg=f"unknown knob(s) {unknown}; known: {sorted(KNOB_FILES)}")

    existed = os.path.exists(state_file)
    if existed:
        with open(state_file, encoding="utf-8") as handle:
            state = json.load(handle)
    else:
        state = {"run_id": module.params["run_id"],
                 "knobs": {name: read_knob(name) for name in KNOB_FILES}}
        if not module.check_mode:
            save_state(state_file, state)

    changed = not existed
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
                                     f"originals are saved in {state_file}", knobs=result)
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
    return {"changed": changed, "knobs": result, "state_file_existed": existed}


def restore(module: AnsibleModule) -> dict:
    state_file = module.params["state_file"]
    if not os.path.exists(state_file):
        return {"changed": False, "knobs": [], "state_file_existed": False}
    with open(state_file, encoding="utf-8") as handle:
        state = json.load(handle)

    changed = False
    result, mismatches = [], []
    for name, original in state["knobs"].items():
        wrote, errors = set_files(original["values"], module.check_mode)
        changed = changed or wrote
        mismatches += [f"{name} at {error}" for error in errors]
        after = read_knob(name)["values"] if original["available"] else {}
        if not module.check_mode and after != original["values"]:
            mismatches.append(f"{name}: wanted {summary(original['values'])}, "
                              f"reads {summary(after)}")
        result.append(knob_record(original, state.get("applied", {}).get(name), summary(after)))
    if mismatches:
        module.fail_json(msg="restore incomplete, state file kept at " + state_file + ": "
                             + "; ".join(mismatches), knobs=result)
    if not module.check_mode:
        os.remove(state_file)
    return {"changed": changed or not module.check_mode, "knobs": result,
            "state_file_existed": True, "restored_run_id": state.get("run_id", "")}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "action": {"type": "str", "required": True, "choices": ["apply", "restore", "probe"]},
            "state_file": {"type": "path", "required": True},
            "knobs": {"type": "dict", "default": {}},
            "run_id": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    action = module.params["action"]
    if action == "probe":
        module.exit_json(changed=False, state_file_existed=os.path.exists(module.params["state_file"]),
                         knobs=[knob_record(read_knob(name)) for name in KNOB_FILES])
    module.exit_json(**(apply(module) if action == "apply" else restore(module)))


if __name__ == "__main__":
    main()
