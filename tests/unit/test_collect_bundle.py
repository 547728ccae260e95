"""The collect role's controller-side unpacking (plugins/modules/fleetscope_bundle.py) against
hostile archives a host could send: each is refused whole with the member and the reason named, the
bundle folder keeps what it held, and nothing is written outside it. An honest bundle is unpacked with
plain modes into a fresh folder that replaces the previous attempt's whole."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import os
import stat
import tarfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fleetscope_bundle", PROJECT / "plugins/modules/fleetscope_bundle.py")
bundle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bundle)

MIB = 1 << 20
MAX_BYTES = 1 * MIB
MAX_FILES = 50
MANIFEST = b'{"bundle_schema": 1}\n'


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", mode: int = 0o600, **attrs) -> tuple:
    return name, kind, data, mode, attrs


HONEST = [member(".", tarfile.DIRTYPE, mode=0o700), member("./manifest.json", data=MANIFEST),
          member("./results", tarfile.DIRTYPE, mode=0o700),
          member("./results/zero_queue.jsonl", data=b'{"experiment": "zero_queue"}\n'),
          member("./raw/perf/zero_queue/point-1.csv", data=b"1,,task-clock\n")]


def archive(path: Path, members: list[tuple], edit=None) -> Path:
    """A gzip'd tar with exactly these members (uid/gid 0 unless given; a member's `pax` records, written
    as they are, make it a PAX archive); `edit` changes the uncompressed tar bytes before they are gzip'd."""
    pax = any("pax" in attrs for *_, attrs in members)
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w", format=tarfile.PAX_FORMAT if pax else tarfile.GNU_FORMAT) as tar:
        for name, kind, data, mode, attrs in members:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid = kind, mode, attrs.get("uid", 0), attrs.get("gid", 0)
            info.linkname = attrs.get("linkname", "")
            info.devmajor, info.devminor = attrs.get("dev", (0, 0))
            info.size = attrs.get("size", len(data)) if kind == tarfile.REGTYPE else 0
            info.pax_headers = attrs.get("pax", {})
            stream = attrs.get("stream", io.BytesIO(data)) if kind == tarfile.REGTYPE else None
            tar.addfile(info, stream)
    content = plain.getvalue()
    with gzip.open(path, "wb") as out:
        out.write(edit(content) if edit else content)
    return path


class Zeros(io.RawIOBase):
    def readinto(self, buffer):
        buffer[:] = bytes(len(buffer))
        return len(buffer)


def tree(root: Path) -> dict[str, tuple]:
    """Every path under root: (kind, mode, content) — what a test compares before and after."""
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        content = path.read_bytes() if stat.S_ISREG(info.st_mode) else os.readlink(path) if path.is_symlink() else None
        found[str(path.relative_to(root))] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), content)
    return found


@pytest.fixture
def results(tmp_path) -> Path:
    """results/<run_id>/ with a sibling host's bundle and this host's earlier bundle."""
    run = tmp_path / "results" / "20261122T034500Z-a1b2c3"
    (run / "node2" / "results").mkdir(parents=True)
    (run / "node2" / "manifest.json").write_text('{"host": "node2"}\n')
    (run / "node1").mkdir()
    (run / "node1" / "manifest.json").write_text('{"host": "node1", "attempt": 1}\n')
    return run


HOSTILE = {
    "a symbolic link out of the bundle": (
        HONEST + [member("./raw/leak", tarfile.SYMTYPE, linkname="/etc/shadow")],
        "member './raw/leak' is a symbolic link (to '/etc/shadow')"),
    "a link to the sibling host, then a file through it": (
        HONEST + [member("./up", tarfile.SYMTYPE, linkname="../node2"), member("./up/manifest.json", data=b"{}")],
        "member './up' is a symbolic link (to '../node2')"),
    "a symbolic link that stays inside": (
        HONEST + [member("./results/alias", tarfile.SYMTYPE, linkname="zero_queue.jsonl")],
        "member './results/alias' is a symbolic link"),
    "a hard link": (
        HONEST + [member("./results/again.jsonl", tarfile.LNKTYPE, linkname="./results/zero_queue.jsonl")],
        "member './results/again.jsonl' is a hard link"),
    "a setuid file": (HONEST + [member("./raw/tool", data=b"\x7fELF", mode=0o4755)],
                      "member './raw/tool' has the setuid or setgid bit (mode 4755)"),
    "a setgid folder": (HONEST + [member("./raw/shared", tarfile.DIRTYPE, mode=0o2775)],
                        "member './raw/shared' has the setuid or setgid bit (mode 2775)"),
    "a device node": (HONEST + [member("./raw/disk", tarfile.BLKTYPE, dev=(8, 0))], "member './raw/disk' is a device node"),
    "a character device": (HONEST + [member("./raw/mem", tarfile.CHRTYPE, dev=(1, 1))], "member './raw/mem' is a device node"),
    "a FIFO": (HONEST + [member("./raw/pipe", tarfile.FIFOTYPE)], "member './raw/pipe' is a FIFO"),
    "a path that climbs out": (HONEST + [member("../node2/manifest.json", data=b"{}")],
                               "member '../node2/manifest.json' leaves the bundle"),
    "a path that climbs out half way": (HONEST + [member("./results/../../node2/x", data=b"{}")], "leaves the bundle"),
    "an absolute path": (HONEST + [member("/tmp/fleetscope-planted", data=b"x")],
                         "member '/tmp/fleetscope-planted' is an absolute path"),
    "a file of another owner": (HONEST + [member("./raw/theirs", data=b"x", uid=1000, gid=1000)],
                                "member './raw/theirs' belongs to uid 1000 gid 1000"),
    "a name given twice": (HONEST + [member("./manifest.json", data=b'{"host": "node2"}')],
                           "member './manifest.json' appears twice"),
    "a file inside a file": (HONEST + [member("./manifest.json/x", data=b"x")], "member './manifest.json/x' lies inside a file"),
    "a decompression bomb (a few KiB that unpack to 16 MiB)": (
        HONEST + [member("./results/bomb.jsonl", size=16 * MIB, stream=Zeros())],
        f"the archive unpacks to more than {MAX_BYTES} bytes (collect_max_bytes)"),
    "a header larger than the cap (a 2 MiB long name)": (
        [member("./" + "n" * (2 * MIB), data=b"x")], f"the archive unpacks to more than {MAX_BYTES} bytes"),
    "a manifest claiming to be a published reference curve": (
        [HONEST[0], member("./manifest.json", data=b'{"bundle_schema": 1, "origin": "reference"}')] + HONEST[2:],
        "manifest.json says origin 'reference': a host sends playbook runs only"),
    "too many files": ([member(f"./raw/{index}.txt") for index in range(MAX_FILES + 1)],
                       f"the archive holds more than {MAX_FILES} files and folders (collect_max_files)"),
    # issue 27
    "no manifest at all": ([m for m in HONEST if m[0] != "./manifest.json"],
                           "the archive holds no manifest.json: it is not a bundle"),
    "a NUL in a pax path": (HONEST + [member("./raw/x", data=b"x", pax={"path": "./raw/a\x00b"})],
                            "member './raw/a\\x00b' has a control character in its name"),
    "a pax size below zero": (HONEST + [member("./raw/y", pax={"size": "-1000000"})],
                              "member './raw/y' claims a negative size (-1000000 bytes)"),
    "a manifest nested 200 000 deep": (
        [HONEST[0], member("./manifest.json", data=b"[" * 200_000 + b"]" * 200_000)] + HONEST[2:],
        "member 'manifest.json' nests arrays and objects too deep to be read"),
    "a manifest of 70 000 keys": (
        [HONEST[0], member("./manifest.json", data=("{" + ",".join(f'"k{index}": 0' for index in range(70_000))
                                                    + "}").encode())] + HONEST[2:],
        "member 'manifest.json' holds 70000 object members, more than 65536"),
    "2 100 nested folders": (HONEST + [member("./" + "d/" * 2100 + "f", data=b"x")],
                             f"lies 2101 folders deep, more than {bundle.MAX_DEPTH}"),
}


def _corrupt_header(name: str):
    """Spoil the checksum of member `name`'s header in the uncompressed tar."""
    def edit(content: bytes) -> bytes:
        start = content.index(name.encode() + b"\0")
        spoiled = bytearray(content)
        spoiled[start + 148:start + 156] = b"9999999\0"
        return bytes(spoiled)
    return edit


MANIFEST_LAST = [member(".", tarfile.DIRTYPE, mode=0o700), member("./results", tarfile.DIRTYPE, mode=0o700),
                 member("./results/zero_queue.jsonl", data=b'{"experiment": "zero_queue"}\n'),
                 member("./manifest.json", data=MANIFEST)]


@pytest.mark.parametrize("edit, reason", [
    (_corrupt_header("./results/zero_queue.jsonl"), "has a header tar cannot read at byte 1024, after 2 members"),
    (_corrupt_header("./manifest.json"), "has a header tar cannot read"),
    (lambda content: content[:len(content.rstrip(b"\0")) + (-len(content.rstrip(b"\0"))) % 512],
     "ends without tar's end-of-archive blocks"),
], ids=["a corrupt header before the manifest", "a corrupt manifest header", "cut before the end blocks"])
def test_an_archive_tarfile_stops_reading_early_is_refused_and_the_earlier_attempt_kept(results, tmp_path, edit,
                                                                                      reason):
    """Issue 27 item 6: Python's tarfile stops without a word at a header it cannot read; what it read
    before (a bundle without manifest) replaced the host's earlier complete attempt, which ingest then
    skipped without a word."""
    (results / "node1" / "manifest.json").write_text('{"host": "node1", "status": "complete"}\n')
    sent = archive(tmp_path / "node1.tar.gz", MANIFEST_LAST, edit=edit)
    before = tree(tmp_path)
    with pytest.raises(bundle.Refused) as refused:
        bundle.unpack(str(sent), str(results / "node1"), MAX_BYTES, MAX_FILES)
    assert reason in str(refused.value)
    assert tree(tmp_path) == before


@pytest.mark.parametrize("earlier, kept", [("complete", True), ("partial", True), ("failed", False), (None, False)])
def test_a_failed_manifest_never_replaces_an_earlier_attempt_that_measured(results, earlier, kept):
    (results / "node1" / "manifest.json").write_text(json.dumps({"host": "node1", "status": earlier}))
    (results / "node1" / "results").mkdir()
    (results / "node1" / "results" / "zero_queue.jsonl").write_text("{}\n")
    before = tree(results / "node1")
    written = bundle.write_manifest(str(results / "node1"), {"host": "node1", "status": "failed"})
    assert written["kept"] is kept
    if kept:
        assert tree(results / "node1") == before
    else:
        assert os.listdir(results / "node1") == ["manifest.json"]


def test_collecting_one_host_leaves_another_host_s_temporary_folder_alone(results, tmp_path):
    """Issue 27 item 10: host `web` cleared leftovers by prefix, `.web.new-`/`.web.old-`, which is also
    how host `web.old-dc`'s folder being unpacked starts: that bundle was then accepted holding only its
    manifest. Host names are whole now, and each temporary folder ends in 16 random hex digits."""
    unpacking = results / ".web.old-dc.new-0123456789abcdef"
    (unpacking / "results").mkdir(parents=True)
    (unpacking / "results" / "zero_queue.jsonl").write_text("{}\n")
    own_leftover = results / ".web.new-fedcba9876543210"
    own_leftover.mkdir()
    bundle.unpack(str(archive(tmp_path / "web.tar.gz", HONEST)), str(results / "web"), MAX_BYTES, MAX_FILES)
    assert (unpacking / "results" / "zero_queue.jsonl").exists()
    assert not own_leftover.exists()
    assert sorted(os.listdir(results)) == [".web.old-dc.new-0123456789abcdef", "node1", "node2", "web"]


@pytest.mark.parametrize("members, reason", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_archive_is_refused_whole_and_nothing_moves(results, tmp_path, members, reason):
    sent = archive(tmp_path / "node1.tar.gz", members)
    before = tree(tmp_path)
    with pytest.raises(bundle.Refused) as refused:
        bundle.unpack(str(sent), str(results / "node1"), MAX_BYTES, MAX_FILES)
    assert reason in str(refused.value)
    assert tree(tmp_path) == before  # the earlier bundle, the sibling, no temporary folder, nothing planted
    assert not Path("/tmp/fleetscope-planted").exists()


def test_a_decompression_bomb_is_stopped_early(results, tmp_path, monkeypatch):
    """The cap stops the reading: an archive of 128 MiB of zeros is refused having decompressed at
    most the cap."""
    sent = archive(tmp_path / "node1.tar.gz", [member("./bomb", size=128 * MIB, stream=Zeros())])
    assert sent.stat().st_size < MIB / 4
    decompressed = []

    class Measured(gzip.GzipFile):
        def close(self):
            if not self.closed:
                decompressed.append(self.tell())
            super().close()

    monkeypatch.setattr(bundle.gzip, "open", Measured)
    with pytest.raises(bundle.Refused, match="unpacks to more than"):
        bundle.unpack(str(sent), str(results / "node1"), MAX_BYTES, MAX_FILES)
    assert decompressed and decompressed[0] <= MAX_BYTES + 1


@pytest.mark.parametrize("content, reason", [(b"not a gzip at all", "could not be unpacked"),
                                             (None, "could not be unpacked")],
                         ids=["not gzip", "truncated"])
def test_an_unreadable_archive_is_refused(results, tmp_path, content, reason):
    sent = tmp_path / "node1.tar.gz"
    if content is None:
        content = archive(tmp_path / "whole.tar.gz", HONEST).read_bytes()[:-40]
        (tmp_path / "whole.tar.gz").unlink()
    sent.write_bytes(content)
    before = tree(tmp_path)
    with pytest.raises(bundle.Refused, match=reason):
        bundle.unpack(str(sent), str(results / "node1"), MAX_BYTES, MAX_FILES)
    assert tree(tmp_path) == before


def test_an_honest_bundle_replaces_the_earlier_attempt_whole_with_plain_modes(results, tmp_path):
    # what an earlier, unsafe unpack could have left: a link to the sibling and a stale file
    (results / "node1" / "up").symlink_to("../node2")
    (results / "node1" / "stale.jsonl").write_text("{}\n")
    sibling = tree(results / "node2")
    world_writable = HONEST + [member("./raw/notes.txt", data=b"hello\n", mode=0o666)]
    sent = archive(tmp_path / "node1.tar.gz", world_writable)
    summary = bundle.unpack(str(sent), str(results / "node1"), MAX_BYTES, MAX_FILES)

    assert summary == {"files": len(world_writable), "bytes": sum(len(m[2]) for m in world_writable), "kept": False}
    unpacked = tree(results / "node1")
    assert {name: kind for name, (kind, _, _) in unpacked.items()} == {
        "manifest.json": stat.S_IFREG, "results": stat.S_IFDIR, "results/zero_queue.jsonl": stat.S_IFREG,
        "raw": stat.S_IFDIR, "raw/perf": stat.S_IFDIR, "raw/perf/zero_queue": stat.S_IFDIR,
        "raw/perf/zero_queue/point-1.csv": stat.S_IFREG, "raw/notes.txt": stat.S_IFREG}
    for name, (kind, mode, _) in unpacked.items():
        assert mode == (0o644 if kind == stat.S_IFREG else 0o755), name
    assert stat.S_IMODE((results / "node1").stat().st_mode) == 0o755
    assert unpacked["manifest.json"][2] == MANIFEST
    assert tree(results / "node2") == sibling
    assert sorted(os.listdir(results)) == ["node1", "node2"]  # no temporary sibling left


def test_a_failed_manifest_replaces_the_bundle_folder(results):
    (results / "node1" / "up").symlink_to("../node2")
    bundle.write_manifest(str(results / "node1"), {"host": "node1", "status": "failed"})
    assert os.listdir(results / "node1") == ["manifest.json"]
    assert (results / "node1" / "manifest.json").read_text() == '{\n  "host": "node1",\n  "status": "failed"\n}\n'
    assert (results / "node2" / "manifest.json").read_text() == '{"host": "node2"}\n'


def test_leftovers_of_an_attempt_that_died_half_way_are_cleared(results, tmp_path):
    (results / ".node1.new-0123456789abcdef" / "results").mkdir(parents=True)
    (results / ".node1.old-0123456789abcdef").mkdir()
    bundle.unpack(str(archive(tmp_path / "node1.tar.gz", HONEST)), str(results / "node1"), MAX_BYTES, MAX_FILES)
    assert sorted(os.listdir(results)) == ["node1", "node2"]


def test_the_manifest_is_written_last(results, tmp_path, monkeypatch):
    """A controller killed half way leaves a folder without manifest.json, which ingest ignores."""
    written = []
    real_open = open

    def recording_open(path, mode="r", *args, **kwargs):
        if mode == "xb":
            written.append(os.path.basename(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(bundle, "open", recording_open, raising=False)
    bundle.unpack(str(archive(tmp_path / "node1.tar.gz", HONEST)), str(results / "node1"), MAX_BYTES, MAX_FILES)
    assert written[-1] == "manifest.json" and len(written) == 3
