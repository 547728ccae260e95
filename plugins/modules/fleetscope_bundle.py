#!/usr/bin/python
"""Put a host's bundle into results/<run_id>/<host>/ on the controller.
The task runs this code in the controller's own process (plugins/action/fleetscope_bundle.py); as a module it
runs the same.

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
  - A name with a control character, a path more than 32 folders deep, a negative size, an archive
    without manifest.json and one that does not end with tar's end-of-archive blocks (a corrupt header
    or a cut stream, where Python's tarfile stops reading without a word) are refused too.
  - The archive may unpack to at most O(max_bytes) bytes (its tar stream, headers included) and hold
    at most O(max_files) members; the check stops reading as soon as a cap is passed.
  - With O(manifest), writes that manifest alone as O(dest)/manifest.json, unless O(dest) holds an
    earlier attempt of the run that measured something (its manifest says complete or partial); a failed
    attempt never replaces one that measured; C(kept) says so.
  - Either way O(dest) is built in a fresh temporary sibling and renamed into place, so whatever was at
    O(dest) before (an earlier attempt of the same run) is replaced whole, or left whole when the archive
    is refused. The archive is removed.
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
kept:
  description: With O(manifest), true when O(dest) held an earlier attempt that measured and was kept.
  type: bool
  returned: always
"""

import gzip
import json
import os
import re
import secrets
import shutil
import stat
import tarfile

from ansible.module_utils.basic import AnsibleModule


FILE_MODE = 0o644
FOLDER_MODE = 0o755
MAX_DEPTH = 32  # folders in a member's path; a bundle's deepest is raw/<tool>/<experiment>/<file>
BLOCK = tarfile.BLOCKSIZE
# A temporary sibling of results/<run_id>/<host>: the host's name whole, then a random hex suffix, so one
# host's leftovers are never another's (host 'web' and host 'web.old-dc' matched one prefix).
_SIBLING = re.compile(r"\.(?P<host>.+)\.(?:new|old)-[0-9a-f]{16}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# What ingest takes of a manifest (fleetscope.ingest: MAX_LINE_BYTES, MAX_JSON_KEYS); read before parsing,
# with its object members counted outside strings in one linear pass: a string runs to its closing quote
# or to the end of its line (the quote is optional, so no attempt fails and backtracks; the module may run
# on a Python without possessive quantifiers).
MAX_MANIFEST_BYTES = 32 * 2**20
MAX_MANIFEST_KEYS = 65536
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\[^\n])*"?')
_STRUCTURE_OUTSIDE_STRINGS = re.compile(r"[^:]+")


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
    """A member's path inside the bundle ('' for the top folder); refuses one that leaves it, one whose
    name no file system takes as given (a NUL, a control character) and one nested deeper than MAX_DEPTH."""
    if _CONTROL.search(name):
        raise Refused("has a control character in its name")
    if name.startswith("/"):
        raise Refused("is an absolute path")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise Refused("leaves the bundle ('..' in its path)")
    if len(parts) > MAX_DEPTH:
        raise Refused(f"lies {len(parts)} folders deep, more than {MAX_DEPTH}")
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
            if member.size < 0:
                raise Refused(f"claims a negative size ({member.size} bytes)")
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
    _check_end(tar)
    if "manifest.json" not in files:
        raise Refused("the archive holds no manifest.json: it is not a bundle")
    return members


def _check_end(tar: tarfile.TarFile) -> None:
    """Python's tarfile stops at a header it cannot read as if the archive ended there: what follows the
    last member must be tar's end-of-archive (zero blocks), or the archive is corrupt or cut short."""
    tar.fileobj.seek(tar.offset)
    end = tar.fileobj.read(BLOCK)
    if end != bytes(BLOCK):
        what = "ends without tar's end-of-archive blocks" if len(end) < BLOCK else "has a header tar cannot read"
        raise Refused(f"the archive {what} at byte {tar.offset}, after {len(tar.members)} members: it is corrupt "
                      "or cut short (nothing after that point could be read)")


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
    """Temporary siblings of this host's earlier attempt that died half way (this host's only: the
    name must be this host's whole)."""
    for entry in os.listdir(parent):
        match = _SIBLING.fullmatch(entry)
        if match and match["host"] == name:
            _remove(os.path.join(parent, entry))


def _sibling(parent: str, name: str, kind: str) -> str:
    path = os.path.join(parent, f".{name}.{kind}-{secrets.token_hex(8)}")
    os.mkdir(path, 0o700)
    return path


def read_manifest(manifest_path: str) -> object:
    """A manifest parsed, or None when it is not JSON; Refused when parsing it would cost more than a manifest
    ingest takes: more than MAX_MANIFEST_BYTES, more than MAX_MANIFEST_KEYS object members (a dict of a
    million keys costs hundreds of MB) or nested too deep for Python's parser."""
    with open(manifest_path, "rb") as stream:
        data = stream.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise Refused(f"member 'manifest.json' is larger than {MAX_MANIFEST_BYTES} bytes: not a manifest")
    try:
        text = data.decode("utf-8")
    except ValueError:
        return None
    keys = _STRUCTURE_OUTSIDE_STRINGS.sub("", _JSON_STRING.sub("", text)).count(":")
    if keys > MAX_MANIFEST_KEYS:
        raise Refused(f"member 'manifest.json' holds {keys} object members, more than {MAX_MANIFEST_KEYS}: not a manifest")
    try:
        return json.loads(text)
    except ValueError:
        return None
    except RecursionError:
        raise Refused("member 'manifest.json' nests arrays and objects too deep to be read: not a manifest") from None


def check_origin(manifest_path: str) -> None:
    """A host's bundle is a playbook run: one whose manifest says it was made on the controller (origin
    `import`, or `reference`, which sets a host apart from its peers in outliers) is refused. Anything else
    wrong with the manifest is left to ingest, which names the field."""
    try:
        manifest = read_manifest(manifest_path)
    except OSError:
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
    new = _sibling(parent, name, "new")
    try:
        summary = fill(new)
        os.chmod(new, FOLDER_MODE)
        old = None
        if os.path.lexists(dest):
            old = _sibling(parent, name, "old")
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
        except (OSError, EOFError, tarfile.TarError, ValueError) as error:
            raise Refused(f"the archive could not be unpacked: {error}") from None
        except RecursionError:
            raise Refused("the archive nests too deep to be unpacked") from None
        check_origin(os.path.join(folder, "manifest.json"))
        return {"files": len(members), "bytes": sum(member.size for member in members), "kept": False}

    return install(dest, fill)


def _measured(dest: str) -> bool:
    """Whether `dest` holds an attempt whose manifest says it measured something (complete or partial)."""
    try:
        earlier = read_manifest(os.path.join(dest, "manifest.json"))
    except (OSError, Refused):
        return False
    return isinstance(earlier, dict) and earlier.get("status") in ("complete", "partial")


def write_manifest(dest: str, manifest: dict) -> dict:
    """Write `manifest` as the whole bundle at `dest`, unless `dest` holds an earlier attempt that measured:
    that one is kept (a refused or lost attempt never destroys measurements already collected)."""
    if _measured(dest):
        return {"files": 0, "bytes": 0, "kept": True}

    def fill(folder: str) -> dict:
        with open(os.path.join(folder, "manifest.json"), "x", encoding="utf-8") as out:
            out.write(json.dumps(manifest, indent=2) + "\n")
        os.chmod(os.path.join(folder, "manifest.json"), FILE_MODE)
        return {"files": 1, "bytes": os.path.getsize(os.path.join(folder, "manifest.json")), "kept": False}

    return install(dest, fill)


ARGUMENT_SPEC = {
    "dest": {"type": "path", "required": True},
    "host": {"type": "str", "required": True},
    "archive": {"type": "path"},
    "manifest": {"type": "dict"},
    "max_bytes": {"type": "int"},
    "max_files": {"type": "int"},
}
ARGUMENT_RULES = {
    "mutually_exclusive": [("archive", "manifest")],
    "required_one_of": [("archive", "manifest")],
    "required_by": {"archive": ("max_bytes", "max_files")},
}


def run(params: dict) -> dict:
    """The task's result for validated `params`: what was written, or failed with the refusal. The archive is
    removed either way. plugins/action/fleetscope_bundle.py calls this in the controller's own process."""
    if params["manifest"] is not None:
        written = write_manifest(params["dest"], params["manifest"])
        return {"changed": not written["kept"], **written}
    try:
        return {"changed": True, **unpack(params["archive"], params["dest"], params["max_bytes"], params["max_files"])}
    except Refused as refused:
        return {"failed": True, "changed": False,
                "msg": f"{params['host']}: bundle refused, nothing of it was kept: {refused}"}
    finally:
        if os.path.lexists(params["archive"]):
            os.unlink(params["archive"])


def main() -> None:
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, **ARGUMENT_RULES)
    result = run(module.params)
    if result.get("failed"):
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
