"""The controller's side of fleetscope_pack: pack the bundle on the host and, with `dest`, take it home in the same
task, or write the host's failed manifest where nothing can be taken.

With `dest` (and `max_files`), the module returns the archive itself (base64, `content`: in the module's reply,
as Ansible's fetch reads a file through `become` with its slurp module) and this plugin unpacks it into `dest` on
the controller with fleetscope_bundle's own code, checked as that module checks every archive, then drops the
content from the result. Packing, fetching (a stat and a slurp or a copy) and unpacking were three tasks a host.

The reply is a host's, so untrusted: content that is not a string, longer than base64 of `max_bytes`, not
base64, or that decodes to more than `max_bytes` is refused before anything is written, naming the host.

Where nothing can be taken, `dest` gets a failed manifest alone (fleetscope_bundle's, which keeps an earlier attempt
of the run that measured, with a warning): without `bundle` (the host has no scratch directory: it failed before
tune made one) the task writes it and succeeds, the stage error already recorded; when the host refused its
archive or the controller refused what came, the error says `stage collect failed in '<task>': <why>` after the
stage error, the task fails and returns it as `stage_error` for the play to keep. That was a task a host of its
own, skipped on every host that sent its bundle.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib.util
import os
from pathlib import Path

from ansible.plugins.action import ActionBase


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


def _load(name: str, path: Path):
    """A file of the collection loaded by path, as its plugins load each other (this plugin may run from the
    repository or an installed collection)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def _manifest_filter():
    """plugins/filter/manifest.py."""
    return _load("fleetscope_pack_manifest", Path(__file__).resolve().parents[1] / "filter" / "manifest.py")


@functools.cache
def bundle_module():
    """The fleetscope_bundle module, as its own action plugin loads it (plugins/action/fleetscope_bundle.py);
    once a worker (a refused archive needs it twice: to unpack, then for the failed manifest)."""
    return _load("fleetscope_pack_bundle_action", Path(__file__).resolve().with_name("fleetscope_bundle.py")).bundle_module()


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
        host, max_bytes, manifest = args["host"], int(args["max_bytes"]), args["manifest"]
        if args.get("bundle") is None:  # no scratch directory: the stage that failed is the manifest's error
            return {**result, **self._failed_manifest(dest, host, manifest, manifest.get("error") or "")}
        packed = self._execute_module(module_name="fleetscope_pack", module_args={**args, "content": True},
                                      task_vars=task_vars)
        content = packed.pop("content", None)
        if packed.get("failed") or self._task.check_mode:
            return {**result, **self._refused(dest, host, manifest, packed)}
        try:
            data = decoded(content, max_bytes)
        except Refused as refused:
            return {**result, **self._refused(dest, host, manifest, {
                **packed, "failed": True, "msg": f"{host}: bundle refused, nothing of it was kept: {refused}"})}
        del content
        archive = f"{dest}.tar.gz"
        write_archive(archive, data)
        del data
        unpacked = bundle_module().run({"archive": archive, "dest": dest, "host": host, "max_bytes": max_bytes,
                                        "max_files": int(max_files), "manifest": None})
        outcome = {**packed, "unpacked": {key: unpacked.get(key) for key in ("files", "bytes")},
                   **{key: unpacked[key] for key in ("failed", "msg") if key in unpacked}}
        return {**result, **self._refused(dest, host, manifest, outcome)}

    def _refused(self, dest: str, host: str, manifest: dict, outcome: dict) -> dict:
        """`outcome` as it is where nothing failed; else failed, with the failed manifest written and the run's
        stage error (the manifest's, then collect's own) as `stage_error`."""
        if not outcome.get("failed") or self._task.check_mode:
            return outcome
        earlier = manifest.get("error")
        error = (f"{earlier}; " if earlier else "") + f"stage collect failed in '{self._task.name}': {outcome.get('msg', '')}"
        written = self._failed_manifest(dest, host, manifest, error)
        return {**outcome, "stage_error": error.strip(), "failed_manifest": written,
                "warnings": list(outcome.get("warnings") or []) + list(written.get("warnings") or [])}

    @staticmethod
    def _failed_manifest(dest: str, host: str, manifest: dict, error: str) -> dict:
        """`dest` holding `manifest` as a failed one (its experiments failed with `error`), unless it holds an earlier
        attempt of the run that measured: that one is kept, with a warning."""
        error = error.strip()
        failed = {**manifest, "status": "failed", "error": error,
                  "experiments": _manifest_filter().manifest_failed_experiments(manifest.get("experiments") or [], error)}
        written = bundle_module().run({"dest": dest, "host": host, "manifest": failed, "archive": None,
                                       "max_bytes": None, "max_files": None})
        if written.get("kept"):
            written["warnings"] = [f"{host}: this attempt brought nothing home; the earlier attempt of run "
                                   f"{manifest.get('run_id')} in {os.path.dirname(os.path.dirname(dest))} measured and is kept as it was"]
        return written
