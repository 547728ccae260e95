"""The controller's side of fleetscope_pack: pack the bundle on the host and, with `dest`, take it home in the same
task.

With `dest` (and `max_files`), the module returns the archive itself (base64, `content`: in the module's reply,
as Ansible's fetch reads a file through `become` with its slurp module) and this plugin unpacks it into `dest` on
the controller with fleetscope_bundle's own code, checked as that module checks every archive, then drops the
content from the result. Packing, fetching (a stat and a slurp or a copy) and unpacking were three tasks a host.

The reply is a host's, so untrusted: content that is not a string, longer than base64 of `max_bytes`, not
base64, or that decodes to more than `max_bytes` is refused before anything is written, naming the host.
"""

from __future__ import annotations

import base64
import binascii
import os

from ansible.plugins.action import ActionBase
from ansible_collections.fleetscope.fleet.plugins.action.fleetscope_bundle import bundle_module


class Refused(Exception):
    """The host's reply is not an archive the controller takes."""


def decoded(content, max_bytes: int) -> bytes:
    """The archive from the module's `content`, within `max_bytes`, in time and memory linear in its length."""
    if not isinstance(content, str):
        raise Refused("the archive's content is missing from the host's reply")
    if len(content) > 4 * ((max_bytes + 2) // 3):
        raise Refused(f"the archive is larger than collect_max_bytes ({max_bytes})")
    try:
        data = base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError):
        raise Refused("the archive's content is not base64") from None
    if len(data) > max_bytes:
        raise Refused(f"the archive is larger than collect_max_bytes ({max_bytes})")
    return data


def write_archive(path: str, data: bytes) -> None:
    """`path` (mode 0600, never through a link), its folder made where missing."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)


class ActionModule(ActionBase):

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        dest = args.pop("dest", None)
        max_files = args.pop("max_files", None)
        if dest is None or max_files is None:
            if dest is not None:
                return {**result, "failed": True, "msg": "fleetscope_pack: dest needs max_files"}
            return {**result, **self._execute_module(module_name="fleetscope_pack", module_args=args,
                                                     task_vars=task_vars)}
        packed = self._execute_module(module_name="fleetscope_pack", module_args={**args, "content": True},
                                      task_vars=task_vars)
        content = packed.pop("content", None)
        if packed.get("failed") or self._task.check_mode:
            return {**result, **packed}
        host, max_bytes = args["host"], int(args["max_bytes"])
        try:
            data = decoded(content, max_bytes)
        except Refused as refused:
            return {**result, **packed, "failed": True,
                    "msg": f"{host}: bundle refused, nothing of it was kept: {refused}"}
        del content
        archive = f"{dest}.tar.gz"
        write_archive(archive, data)
        del data
        unpacked = bundle_module().run({"archive": archive, "dest": dest, "host": host, "max_bytes": max_bytes,
                                        "max_files": int(max_files), "manifest": None})
        return {**result, **packed, "unpacked": {key: unpacked.get(key) for key in ("files", "bytes")},
                **{key: unpacked[key] for key in ("failed", "msg") if key in unpacked}}
