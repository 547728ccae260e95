#!/usr/bin/python
"""Unpack the kernel suite's sources, sent in the task's arguments, and compile them on the host.

The sources travel as one archive in the module's own arguments (its action plugin, plugins/action/fleetscope_build.py,
packs them once a run on the controller from the task's `sources`), so a host's build is one task and one round
trip: a copy of the archive first was a second task of five round trips (stat, a temporary folder, the transfer,
the copy module, cleaning up). The archive is a no_log option: neither the result, nor the host's log of the
module's invocation, nor -vvv's output carries its 200-odd KB.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_build
short_description: Unpack the kernel suite's sources and compile them on the host
description:
  - Its action plugin, on the controller, takes C(sources) (the suite's folder there), packs it once a run and
    passes it as O(archive).
  - Decodes O(archive) (a gzip tar of the suite's Makefile, include/ and src/, base64), unpacks it into
    O(dest) with C(tar) and runs C(make -C dest -jN), the compiler's output written to O(log) whether the
    build succeeds or not and returned as RV(stdout).
author:
  - fleetscope maintainers (@fleetscope)
options:
  archive:
    description: The sources as a base64 gzip tar (not logged).
    type: str
    required: true
  dest:
    description: The folder to unpack into and build in (it exists, the run's scratch directory's kernels/).
    type: path
    required: true
  jobs:
    description: Compilers run at once (make -j).
    type: int
    default: 1
  log:
    description: The file the compiler's output goes to (the bundle's raw/build.log).
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Unpack and compile the kernel suite on the host
  fleetscope.fleet.fleetscope_build:
    sources: "{{ playbook_dir }}/kernels"
    dest: /var/tmp/fleetscope-run/kernels
    jobs: 4
    log: /var/tmp/fleetscope-run/bundle/raw/build.log
"""

RETURN = r"""
stdout:
  description: The compiler's output (make's stdout and stderr, as written to O(log)).
  type: str
  returned: when make ran
rc:
  description: make's exit status.
  type: int
  returned: when make ran
"""

import base64
import binascii
import os
import subprocess

from ansible.module_utils.basic import AnsibleModule


def main() -> None:
    module = AnsibleModule(argument_spec={"archive": {"type": "str", "required": True, "no_log": True},
                                          "dest": {"type": "path", "required": True},
                                          "jobs": {"type": "int", "default": 1},
                                          "log": {"type": "path", "required": True}})
    params = module.params
    try:
        packed = base64.b64decode(params["archive"], validate=True)
    except (binascii.Error, ValueError) as error:
        module.fail_json(msg=f"the sources' archive is not base64 ({error})")
    os.umask(0o077)
    unpacked = subprocess.run(["tar", "-xzf", "-", "-C", params["dest"]], input=packed, capture_output=True,
                              check=False)
    if unpacked.returncode != 0:
        module.fail_json(msg=f"tar could not unpack the sources into {params['dest']}: "
                             f"{unpacked.stderr.decode('utf-8', 'replace').strip()}", rc=unpacked.returncode)
    with open(params["log"], "wb") as log:
        built = subprocess.run(["make", "-C", params["dest"], f"-j{max(params['jobs'], 1)}"], stdout=log,
                               stderr=subprocess.STDOUT, check=False)
    with open(params["log"], "rb") as log:
        output = log.read().decode("utf-8", "replace")
    if built.returncode != 0:
        module.fail_json(msg=f"make failed (exit status {built.returncode}): the compiler's output is in "
                             f"{params['log']}", rc=built.returncode, stdout=output)
    module.exit_json(changed=True, rc=built.returncode, stdout=output)


if __name__ == "__main__":
    main()
