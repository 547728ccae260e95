"""The controller's side of fleetscope_build: the kernel suite's sources, packed once a run, in the module's call.

The task names the sources' folder on the controller (`sources`); the first host's call packs Makefile, include/
and src/ into a gzip tar (base64, as a module's arguments are text) kept in this ansible-playbook's own temporary
folder, which every fork shares and Ansible removes at the end of the run; each host's call reads it and sends
it as the module's `archive`, a no_log option. One task a host, and no task of the controller's own: packing
was a task that printed the archive's 230 KB with -v, and a copy of it to each host a second task of five
round trips.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile

from ansible import constants as C
from ansible.plugins.action import ActionBase

PACKED = ("Makefile", "include", "src")  # no binaries travel: the host builds its own


def pack(folder: str) -> str:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz", compresslevel=6) as tar:
        for name in PACKED:
            tar.add(os.path.join(folder, name), arcname=name)
    return base64.b64encode(archive.getvalue()).decode("ascii")


def packed_sources(folder: str) -> str:
    """`folder`'s sources packed, once per run: the first fork to ask writes them to the run's temporary folder."""
    cache = os.path.join(C.DEFAULT_LOCAL_TMP, "fleetscope-kernels-"
                         + hashlib.sha256(os.path.realpath(folder).encode("utf-8", "surrogateescape")).hexdigest()[:16])
    try:
        with open(cache, encoding="ascii") as handle:
            return handle.read()
    except FileNotFoundError:
        pass
    packed = pack(folder)
    partial = f"{cache}.{os.getpid()}"
    with open(partial, "w", encoding="ascii") as handle:
        handle.write(packed)
    os.replace(partial, cache)  # whole or not at all, for a fork reading it meanwhile
    return packed


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        sources = args.pop("sources", None)
        if not isinstance(sources, str) or not os.path.isdir(sources):
            return {**result, "failed": True, "changed": False,
                    "msg": f"sources: {sources!r} is not the kernel suite's folder on the controller"}
        try:
            args["archive"] = packed_sources(sources)
        except OSError as error:
            return {**result, "failed": True, "changed": False,
                    "msg": f"cannot pack the kernel suite's sources in {sources}: {error}"}
        return {**result, **self._execute_module(module_name="fleetscope_build", module_args=args,
                                                 task_vars=task_vars)}
