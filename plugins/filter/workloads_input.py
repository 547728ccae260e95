"""The check of fleet_workloads that its argument spec cannot make: an argument spec turns a command
written as one string into a one-item list (and a comma in it into a split), names are free text there,
and duplicates pass. Each problem is one message naming fleet_workloads[i] and what to write instead."""

from __future__ import annotations

import re
from collections.abc import Mapping

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# The reference workload the role adds itself (roles/workloads/vars/main.yml): a user's may not take its name.
RESERVED = "reference_alloc_walk"
KEYS = ("name", "command", "repeats", "timeout_s", "chdir")
EXAMPLE = "fleet_workloads: [{name: gzip, command: [gzip, -9, -c, /usr/share/dict/words]}]"


def _positive_int(value) -> bool:
    return not isinstance(value, bool) and str(value).strip().isdigit() and int(str(value)) > 0


def preflight_workload_problems(workloads) -> list[str]:
    if workloads is None:
        return []
    if isinstance(workloads, (str, Mapping)) or not isinstance(workloads, (list, tuple)):
        return [f"fleet_workloads must be a list of {{name, command}} entries, e.g. {EXAMPLE}"]
    problems, seen = [], set()
    for index, workload in enumerate(workloads):
        where = f"fleet_workloads[{index}]"
        if not isinstance(workload, Mapping):
            problems.append(f"{where} is {workload!r}: each entry is a mapping {{name, command}}, e.g. {EXAMPLE}")
            continue
        name = workload.get("name")
        label = f"{where} ({name})" if isinstance(name, str) else where
        unknown = sorted(set(workload) - set(KEYS))
        if unknown:
            problems.append(f"{label} has {', '.join(map(str, unknown))}: an entry takes only {', '.join(KEYS)}")
        if not isinstance(name, str) or not NAME.fullmatch(name):
            problems.append(f"{where}.name={name!r}: give 1-64 of A-Z a-z 0-9 _ . - starting with a letter or digit "
                            "(it names files and report rows)")
        elif name == RESERVED:
            problems.append(f"{where}.name={name!r} is the reference workload's own name (workloads_reference); "
                            "give yours another")
        elif name in seen:
            problems.append(f"{label}: the name {name} is used twice; give each workload its own")
        else:
            seen.add(name)
        command = workload.get("command")
        if isinstance(command, str):
            problems.append(f"{label}.command is one string ({command!r}): write it as a list of arguments, e.g. "
                            f"{command.split()!r}; commands run without a shell")
        elif not isinstance(command, (list, tuple)) or not command:
            problems.append(f"{label}.command is missing or empty: give the command as a list of arguments, "
                            "e.g. [gzip, -9, FILE]")
        elif not all(isinstance(argument, (str, int, float)) and not isinstance(argument, bool)
                     for argument in command) or not str(command[0]).strip():
            problems.append(f"{label}.command={command!r}: every argument must be a string or number, the first "
                            "one the program")
        for key in ("repeats", "timeout_s"):
            if workload.get(key) is not None and not _positive_int(workload[key]):
                problems.append(f"{label}.{key}={workload[key]!r}: give a whole number above 0")
        if workload.get("chdir") is not None and (not isinstance(workload["chdir"], str) or not workload["chdir"]):
            problems.append(f"{label}.chdir={workload['chdir']!r}: give a directory path")
    return problems


class FilterModule:
    def filters(self):
        return {"preflight_workload_problems": preflight_workload_problems}
