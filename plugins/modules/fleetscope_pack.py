#!/usr/bin/python
"""Write a host's bundle manifest and pack the bundle, in one call on the host.

This was five tasks (find the files, write the manifest with copy, tar, stat, assert the size), each a round
trip and about 0.1-0.25 s of the controller's CPU a host in a lab run. The manifest's experiments keep their
result files and raw outputs only where the bundle holds them, and its status follows from them and the stage
error (plugins/module_utils/manifest.py, shared with the controller's filters).
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_pack
short_description: Write a host's bundle manifest and pack the bundle into one gzip'd tar, within a size cap
author:
  - fleetscope maintainers (@fleetscope)
description:
  - Lists the regular files under O(bundle)C(/results) and O(bundle)C(/raw) (links are not followed).
  - Writes O(bundle)C(/manifest.json) (mode 0600) from O(manifest), with each experiment's C(file) and C(raw)
    outputs kept only where the bundle holds them, and C(status) (complete, partial or failed) from the
    experiments and the manifest's C(error).
  - Packs O(bundle) with the host's C(tar) into O(archive) and fails, naming O(host), when the archive alone is
    larger than O(max_bytes), before anything is sent.
  - Its action plugin, on the controller, takes two arguments the module never sees - C(dest) and C(max_files) -
    with which it asks for O(content), unpacks the archive into C(dest) with M(fleetscope.fleet.fleetscope_bundle)'s
    checks and drops the content from the result; where nothing can be taken (no O(bundle), as the host has no
    scratch directory, or a refused archive) it writes the host's failed manifest there instead, and a refusal fails
    the task with the run's stage error as C(stage_error).
options:
  bundle:
    description: The bundle folder on the host.
    type: path
    required: true
  archive:
    description: The archive to write, outside O(bundle).
    type: path
    required: true
  manifest:
    description: The manifest without C(status); its C(experiments) as the run recorded them.
    type: dict
    required: true
  host:
    description: The host, named in a refusal.
    type: str
    required: true
  max_bytes:
    description: Most bytes the archive may have (collect_max_bytes).
    type: int
    required: true
  content:
    description: Return the archive itself, base64-encoded, as C(content), so the controller needs no second call
      to fetch it (the collection's action plugin asks for it, unpacks it on the controller and keeps it out of
      the task's result).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Write the manifest and pack the bundle
  fleetscope.fleet.fleetscope_pack:
    bundle: /var/tmp/fleetscope-20261122T034500Z-a1b2c3-x1y2z3/bundle
    archive: /var/tmp/fleetscope-20261122T034500Z-a1b2c3-x1y2z3/bundle.tar.gz
    host: node1
    max_bytes: 268435456
    manifest:
      bundle_schema: 1
      run_id: 20261122T034500Z-a1b2c3
      host: node1
      error: null
      experiments: []
"""

RETURN = r"""
size:
  description: Bytes of the archive.
  type: int
  returned: success
files:
  description: The files found under results/ and raw/, relative to O(bundle).
  type: list
  elements: str
  returned: success
status:
  description: The manifest's status.
  type: str
  returned: success
content:
  description: The archive, base64-encoded.
  type: str
  returned: success and O(content)
"""

import base64
import json
import os
import stat

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fleetscope.fleet.plugins.module_utils.manifest import manifest_experiments, manifest_status

FOLDERS = ("results", "raw")


def present_files(bundle: str) -> list:
    """Paths, relative to `bundle`, of the regular files below its results/ and raw/ folders."""
    found = []
    for folder in FOLDERS:
        for top, _folders, names in os.walk(os.path.join(bundle, folder)):
            for name in names:
                path = os.path.join(top, name)
                if stat.S_ISREG(os.lstat(path).st_mode):
                    found.append(os.path.relpath(path, bundle))
    return sorted(found)


def write_manifest(bundle: str, manifest: dict, present: list) -> dict:
    experiments = manifest_experiments(manifest.get("experiments") or [], present)
    manifest = dict(manifest, experiments=experiments, status=manifest_status(experiments, manifest.get("error")))
    path = os.path.join(bundle, "manifest.json")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), 0o600)  # O_CREAT leaves an older manifest.json its mode
        out.write(json.dumps(manifest, indent=2, sort_keys=True, separators=(",", ": ")) + "\n")
    return manifest


def main() -> None:
    module = AnsibleModule(argument_spec={"bundle": {"type": "path", "required": True},
                                          "archive": {"type": "path", "required": True},
                                          "manifest": {"type": "dict", "required": True},
                                          "host": {"type": "str", "required": True},
                                          "max_bytes": {"type": "int", "required": True},
                                          "content": {"type": "bool", "default": False}})
    params = module.params
    present = present_files(params["bundle"])
    try:
        manifest = write_manifest(params["bundle"], params["manifest"], present)
    except OSError as error:  # manifest.json planted as a link (O_NOFOLLOW), a full disk
        module.fail_json(msg=f"{params['host']}: the bundle's manifest could not be written: {error}")
    module.run_command(["tar", "-C", params["bundle"], "-czf", params["archive"], "."], check_rc=True)
    size = os.stat(params["archive"]).st_size
    if size > params["max_bytes"]:
        module.fail_json(msg=f"{params['host']}: bundle refused, nothing of it was kept: the archive alone is {size} "
                             f"bytes, more than collect_max_bytes ({params['max_bytes']})")
    sent = {}
    if params["content"]:
        with open(params["archive"], "rb") as archive:
            sent["content"] = base64.b64encode(archive.read()).decode("ascii")
    module.exit_json(changed=True, size=size, files=present, status=manifest["status"], **sent)


if __name__ == "__main__":
    main()
