#!/usr/bin/python
"""Create a run's scratch directory on a host: fresh, with a name nobody can predict, owned by the
run's user with mode 0700, in a scratch root that no other user controls.

Root builds and runs binaries in it, so no other user may be able to put anything there or swap it
for a folder of theirs: every folder from / down to the scratch root must belong to root (or to the
run's user) and be writable by nobody else unless it is sticky (like /var/tmp). A folder of this run
id left by an earlier attempt of the same run (a host that dropped out, then a rerun) is removed when
it is the run user's own; one of another user is left alone, named in a warning, and never used. So is
the scratch directory of a dead run whose lock this run took over (taken_over_run_id): that run will never
remove it.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_scratch
short_description: Create a run's fresh, private scratch directory under a scratch root only root controls
description:
  - Creates O(root)/fleetscope-O(run_id)-<random> with mode 0700, owned by the run's user, after checking
    that every folder from / down to O(root) belongs to root or to the run's user and is writable by
    nobody else unless it is sticky (like /var/tmp).
  - A folder of the same run id left by an earlier attempt is removed when it is the run user's own;
    one of another user is left alone, named in a warning, and never used.
  - Sets the host's facts C(fleet_scratch_dir) (the new directory, where the roles build, measure and collect) and
    C(fleet_hugepages_free) (the hugetlbfs pages free in /proc/meminfo, which the kernels' plan prices the huge-page
    points from). Read here, under the run's lock once the host is tuned, it needs no task of its own.
author:
  - fleetscope maintainers (@fleetscope)
options:
  root:
    description: The scratch root (fleet_scratch_root).
    type: path
    required: true
  run_id:
    description: The run id; the directory is <root>/fleetscope-<run_id>-<random>.
    type: str
    required: true
  taken_over_run_id:
    description: The run id of a dead run whose lock this run took over; its scratch directories are removed
      as an earlier attempt's are.
    type: str
  folders:
    description: Folders to create inside the new scratch directory (relative paths, mode 0700), so the roles
      that build and measure in it need no task of their own to make them (each such task is a round trip
      to the host and controller CPU, per host).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Create this run's scratch directory
  fleetscope.fleet.fleetscope_scratch:
    root: /var/tmp
    run_id: 20261122T034500Z-a1b2c3
  register: scratch

- name: Build in it
  ansible.builtin.command:
    argv: [make, -C, "{{ scratch.path }}/kernels"]
"""

RETURN = r"""
ansible_facts:
  description: C(fleet_scratch_dir), the new directory; C(fleet_hugepages_free), the free hugetlbfs pages (0 where
    the kernel has none, null where /proc/meminfo cannot be read).
  type: dict
  returned: success
path:
  description: The new scratch directory.
  type: str
  returned: success
removed:
  description: Folders of an earlier attempt of this run, or of the dead run it took over, that were removed.
  type: list
  returned: success
"""

import os
import re
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule


RUN_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}")


class Unsafe(Exception):
    """A scratch root another user could tamper with."""


def safe_root(root: str) -> str:
    """The scratch root's real path, once every folder from / down to it is checked."""
    real = os.path.realpath(root)
    me = os.geteuid()
    folder = "/"
    for part in [""] + real.strip("/").split("/"):
        folder = os.path.join(folder, part)
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode):
            raise Unsafe(f"{folder} is not a folder")
        if info.st_uid not in (0, me):
            raise Unsafe(f"{folder} belongs to uid {info.st_uid}")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
            raise Unsafe(f"{folder} can be written by other users (mode {stat.S_IMODE(info.st_mode):04o}, not sticky)")
    return real


def create(root: str, run_id: str, taken_over_run_id: str | None = None, folders: list[str] = ()) -> dict:
    inside = [os.path.normpath(folder) for folder in folders]
    outside = [folder for folder in folders if os.path.isabs(folder) or os.path.normpath(folder).split(os.sep)[0] == ".."]
    if outside:
        raise ValueError(f"folders must lie inside the scratch directory, not {', '.join(outside)}")
    real = safe_root(root)
    prefix = f"fleetscope-{run_id}"
    prefixes = [prefix]
    if taken_over_run_id and RUN_ID.fullmatch(taken_over_run_id):  # the id came from the host's state file
        prefixes.append(f"fleetscope-{taken_over_run_id}")
    removed, foreign = [], []
    for name in sorted(os.listdir(real)):
        if not any(name == mine or name.startswith(mine + "-") for mine in prefixes):
            continue
        path = os.path.join(real, name)
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
            shutil.rmtree(path)
            removed.append(path)
        else:
            foreign.append(f"{path} (uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):04o})")
    path = tempfile.mkdtemp(prefix=prefix + "-", dir=real)
    for folder in inside:  # every level 0700 as the scratch directory itself, whatever the umask
        level = path
        for part in folder.split(os.sep):
            level = os.path.join(level, part)
            if not os.path.isdir(level):
                os.mkdir(level, 0o700)
                os.chmod(level, 0o700)
    return {"path": path, "removed": removed, "foreign": foreign}


def hugepages_free(meminfo: str = "/proc/meminfo") -> int | None:
    """The hugetlbfs pages of the default size free now: 0 where the kernel has none to give (no HugePages_Free
    line), None where /proc/meminfo cannot be read."""
    try:
        with open(meminfo, encoding="ascii", errors="replace") as handle:
            for line in handle:
                name, _colon, value = line.partition(":")
                if name == "HugePages_Free":
                    return int(value.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return 0


def main() -> None:
    module = AnsibleModule(argument_spec={"root": {"type": "path", "required": True},
                                          "run_id": {"type": "str", "required": True},
                                          "taken_over_run_id": {"type": "str"},
                                          "folders": {"type": "list", "elements": "str", "default": []}})
    try:
        created = create(module.params["root"], module.params["run_id"], module.params["taken_over_run_id"],
                         module.params["folders"])
    except Unsafe as error:
        module.fail_json(msg=f"fleet_scratch_root={module.params['root']}: {error}: another user could put files "
                             "in the run's scratch directory or swap it for one of theirs, and root builds and "
                             "runs binaries there. Choose a scratch root that only root controls (the default "
                             "is /var/tmp).")
    except ValueError as error:
        module.fail_json(msg=str(error))
    except OSError as error:
        module.fail_json(msg=f"fleet_scratch_root={module.params['root']}: cannot create the run's scratch directory: {error}")
    for leftover in created.pop("foreign"):
        module.warn(f"{leftover} is named like this run's scratch directory but is not the run's own: "
                    "left alone and not used")
    module.exit_json(changed=True, ansible_facts={"fleet_scratch_dir": created["path"],
                                                  "fleet_hugepages_free": hugepages_free()}, **created)


if __name__ == "__main__":
    main()
