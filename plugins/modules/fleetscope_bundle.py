#!/usr/bin/python
"""Put a host's bundle into results/<run_id>/<host>/ on the controller.

The archive comes from a host, and a host is untrusted: it may be compromised or simply broken. So
only regular files and folders are unpacked, each inside the bundle, owned by the controller's user
with modes 0644/0755, within a cap on bytes and on files; anything else refuses the whole archive
with the host, the member and the reason named. The bundle is built in a fresh temporary sibling of
its destination and renamed into place, so the destination holds either the previous bundle or the
new one, never a half-unpacked one, and nothing from an earlier attempt of the same run survives.
A refused host gets a failed manifest, written the same way (`manifest` instead of `archive`).
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_bundle
short_description: Unpack a host's bundle archive safely, or write a failed manifest, on the controller
author:
  - fleetscope maintainers (@fleetscope)
description:
  - With O(archive), unpacks a gzip'd tar into O(dest). Only regular files and folders are accepted;
    symbolic and hard links, devices, FIFOs, sparse files, setuid/setgid modes, absolute paths, C(..),
    a name given twice, a member inside a file and a member whose owner differs from the first
    member's (the host's tar writes the bundle's top folder first) refuse the whole archive. Modes
    become 0644 (files) and 0755 (folders); owners are not applied.
  - The archive may unpack to at most O(max_bytes) bytes (its tar stream, headers included) and hold
    at most O(max_files) members; the check stops reading as soon as a cap is passed.
  - With O(manifest), writes that manifest alone as O(dest)/manifest.json.
  - Either way O(dest) is built in a fresh temporary sibling and renamed into place, so whatever was at
    O(dest) before (an earlier attempt of the same run) is replaced whole. The archive is removed.
options:
  dest:
    description: The bundle folder, results/<run_id>/<host>.
    type: path
    required: true
  host:
    description: The host the bundle comes from, named in every refusal.
    type: str
    required: true
  archive:
    description: The fetched gzip'd tar. Mutually exclusive with O(manifest).
    type: path
  manifest:
    description: A manifest to write as the whole bundle (a host whose bundle could not be taken).
    type: dict
  max_bytes:
    description: Most bytes the archive may unpack to (required with O(archive)).
    type: int
  max_files:
    description: Most files and folders the archive may hold (required with O(archive)).
    type: int
"""

EXAMPLES = r"""
- name: Unpack a host's bundle on the controller (refused whole if it breaks a rule)
  fleetscope.fleet.fleetscope_bundle:
    archive: /srv/fleet/results/20261122T034500Z-a1b2c3/node1.tar.gz
    dest: /srv/fleet/results/20261122T034500Z-a1b2c3/node1
    host: node1
    max_bytes: 268435456
    max_files: 10000
  delegate_to: localhost

- name: Record a host that dropped out as a failed bundle
  fleetscope.fleet.fleetscope_bundle:
    dest: /srv/fleet/results/20261122T034500Z-a1b2c3/node2
    host: node2
    manifest:
      bundle_schema: 1
      run_id: 20261122T034500Z-a1b2c3
      host: node2
      status: failed
  delegate_to: localhost
"""

RETURN = r"""
files:
  description: Files and folders unpacked.
  type: int
  returned: always
bytes:
  description: Bytes of file content unpacked.
  type: int
  returned: always
"""

import gzip
import json
import os
import shutil
import stat
import tarfile
import tempfile

from ansible.module_utils.basic import AnsibleModule


FILE_MODE = 0o644
FOLDER_MODE = 0o755


class Refused(Exception):
    """The archive is not a bundle the controller takes; the message says which member and why."""


class CappedStream:
    """A read-only, seekable view of the decompressed tar stream that refuses to go past `cap`
    bytes, so neither a decompression bomb nor an oversized header is ever expanded beyond it."""

    def __init__(self, stream, cap: int):
        self.stream = stream
        self.cap = cap

    def _refuse(self):
        raise Refused(f"the archive unpacks to more than {self.cap} bytes (collect_max_bytes)")

    def read(self, size: int = -1) -> bytes:
        room = self.cap + 1 - self.stream.tell()
        data = self.stream.read(room if size < 0 else min(size, room))
        if self.stream.tell() > self.cap:
            self._refuse()
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET and offset > self.cap:
            self._refuse()
        position = self.stream.seek(offset, whence)
        if position > self.cap:
            self._refuse()
        return position

    def tell(self) -> int:
        return self.stream.tell()


def _kind(member: tarfile.TarInfo) -> str | None:
    """What a member is, when it is something a bundle never holds."""
    if member.issym():
        return f"a symbolic link (to {member.linkname!r})"
    if member.islnk():
        return f"a hard link (to {member.linkname!r})"
    if member.ischr() or member.isblk():
        return "a device node"
    if member.isfifo():
        return "a FIFO"
    if member.issparse():
        return "a sparse file"
    if not (member.isreg() or member.isdir()):
        return f"of tar type {member.type!r}"
    return None


def bundle_path(name: str) -> str:
    """A member's path inside the bundle ('' for the top folder); refuses one that leaves it."""
    if name.startswith("/"):
        raise Refused("is an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise Refused("leaves the bundle ('..' in its path)")
    return "/".join(parts)


def checked_members(tar: tarfile.TarFile, max_files: int, max_bytes: int) -> list[tarfile.TarInfo]:
    """Every member, checked, read lazily so a cap stops the reading as soon as it is passed."""
    members, seen, files = [], set(), set()
    owner, size = None, 0
    for member in tar:
        if len(members) == max_files:
            raise Refused(f"the archive holds more than {max_files} files and folders (collect_max_files)")
        try:
            kind = _kind(member)
            if kind:
                raise Refused(f"is {kind}; a bundle holds regular files and folders only")
            path = bundle_path(member.name)
            if member.mode & (stat.S_ISUID | stat.S_ISGID):
                raise Refused(f"has the setuid or setgid bit (mode {member.mode:04o})")
            owner = owner or (member.uid, member.gid)
            if (member.uid, member.gid) != owner:
                raise Refused(f"belongs to uid {member.uid} gid {member.gid}, the archive's first member to "
                              f"uid {owner[0]} gid {owner[1]}: written by another user")
            if path in seen:
                raise Refused("appears twice")
            if any("/".join(path.split("/")[:depth]) in files for depth in range(1, path.count("/") + 1)):
                raise Refused("lies inside a file")
        except Refused as refused:
            raise Refused(f"member {member.name!r} {refused}") from None
        size += member.size
        if size > max_bytes:
            raise Refused(f"the archive unpacks to more than {max_bytes} bytes (collect_max_bytes)")
        seen.add(path)
        if member.isreg():
            files.add(path)
        members.append(member)
    return members


def extract(tar: tarfile.TarFile, members: list[tarfile.TarInfo], folder: str) -> None:
    """Write the checked members into the fresh `folder`: nothing but folders and new files, modes
    FOLDER_MODE and FILE_MODE, owners never applied. Written here rather than by tarfile's
    extraction so it behaves alike on every Python the controller may run modules with. manifest.json
    comes last: a folder left half way by a killed controller holds no manifest, so `fleetscope
    ingest` never takes it for a bundle."""
    for member in sorted(members, key=lambda member: bundle_path(member.name) == "manifest.json"):
        path = os.path.join(folder, bundle_path(member.name))
        if member.isdir():
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tar.extractfile(member) as source, open(path, "xb") as target:
            shutil.copyfileobj(source, target)
    for root, folders, files in os.walk(folder):
        for name in folders:
            os.chmod(os.path.join(root, name), FOLDER_MODE)
        for name in files:
            os.chmod(os.path.join(root, name), FILE_MODE)


def _remove(path: str) -> None:
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
    else:
        shutil.rmtree(path)


def _clear_leftovers(parent: str, name: str) -> None:
    """Temporary siblings of an earlier attempt that died half way."""
    for entry in os.listdir(parent):
        if entry.startswith((f".{name}.new-", f".{name}.old-")):
            _remove(os.path.join(parent, entry))


def check_origin(manifest_path: str) -> None:
    """A host's bundle is a playbook run: one whose manifest says it was made on the controller (origin
    `import`, or `reference`, which sets a host apart from its peers in outliers) is refused. Anything else
    wrong with the manifest is left to ingest, which names the field."""
    try:
        with open(manifest_path, encoding="utf-8") as stream:
            manifest = json.load(stream)
    except (OSError, ValueError):
        return
    origin = manifest.get("origin", "playbook") if isinstance(manifest, dict) else "playbook"
    if origin != "playbook":
        raise Refused(f"manifest.json says origin {origin!r}: a host sends playbook runs only ('import' and "
                      "'reference' bundles are made on the controller)")


def install(dest: str, fill) -> dict:
    """Build the bundle with `fill(folder)` in a fresh sibling of `dest`, then rename it into place."""
    parent, name = os.path.split(os.path.abspath(dest))
    os.makedirs(parent, mode=FOLDER_MODE, exist_ok=True)
    _clear_leftovers(parent, name)
    new = tempfile.mkdtemp(prefix=f".{name}.new-", dir=parent)
    try:
        summary = fill(new)
        os.chmod(new, FOLDER_MODE)
        old = None
        if os.path.lexists(dest):
            old = tempfile.mkdtemp(prefix=f".{name}.old-", dir=parent)
            os.rename(dest, os.path.join(old, name))
        os.rename(new, dest)
    except BaseException:
        _remove(new)
        raise
    if old:
        _remove(old)
    return summary


def unpack(archive: str, dest: str, max_bytes: int, max_files: int) -> dict:
    """Unpack `archive` into `dest` (replacing it), or raise Refused and leave `dest` as it was."""

    def fill(folder: str) -> dict:
        try:
            with gzip.open(archive, "rb") as stream, \
                    tarfile.open(fileobj=CappedStream(stream, max_bytes), mode="r:") as tar:
                members = checked_members(tar, max_files, max_bytes)
                extract(tar, members, folder)
        except (OSError, EOFError, tarfile.TarError) as error:
            raise Refused(f"the archive could not be unpacked: {error}") from None
        check_origin(os.path.join(folder, "manifest.json"))
        return {"files": len(members), "bytes": sum(member.size for member in members)}

    return install(dest, fill)


def write_manifest(dest: str, manifest: dict) -> dict:
    def fill(folder: str) -> dict:
        with open(os.path.join(folder, "manifest.json"), "x", encoding="utf-8") as out:
            out.write(json.dumps(manifest, indent=2) + "\n")
        os.chmod(os.path.join(folder, "manifest.json"), FILE_MODE)
        return {"files": 1, "bytes": os.path.getsize(os.path.join(folder, "manifest.json"))}

    return install(dest, fill)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "dest": {"type": "path", "required": True},
            "host": {"type": "str", "required": True},
            "archive": {"type": "path"},
            "manifest": {"type": "dict"},
            "max_bytes": {"type": "int"},
            "max_files": {"type": "int"},
        },
        mutually_exclusive=[("archive", "manifest")],
        required_one_of=[("archive", "manifest")],
        required_by={"archive": ("max_bytes", "max_files")},
    )
    params = module.params
    if params["manifest"] is not None:
        module.exit_json(changed=True, **write_manifest(params["dest"], params["manifest"]))
    try:
        summary = unpack(params["archive"], params["dest"], params["max_bytes"], params["max_files"])
    except Refused as refused:
        module.fail_json(msg=f"{params['host']}: bundle refused, nothing of it was kept: {refused}")
    finally:
        if os.path.lexists(params["archive"]):
            os.unlink(params["archive"])
    module.exit_json(changed=True, **summary)


if __name__ == "__main__":
    main()
