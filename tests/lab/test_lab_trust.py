"""Hosts the controller must not trust, in one run of the real site.yml over three hosts:
  fslab1  was left tuned by a run that died (its lock names an ansible-playbook that is gone, its
          scratch directory is still there): this run takes the lock over, restores the dead run's
          originals and removes its scratch directory; then it sends a hostile bundle (a link to
          /etc/shadow, a link to its sibling's folder): refused whole, and a failed manifest names the
          host, the member and the rule;
  fslab2  honest, while another user keeps planting /var/tmp/fleetscope-<run_id>/kernels (the name
          the scratch directory used to have): the run never builds or runs anything in it;
  fslab3  sends a decompression bomb (a 64 KiB archive of 64 MiB): refused at the cap.
Nothing is written outside results/<run_id>/<host>/, and fslab2 is collected, loaded and reported.
Then fslab2 is run again in the same run id and sends an archive without a manifest: refused, and its
complete first attempt is kept as it was.
(Every other hostile archive is refused in tests/unit/test_collect_bundle.py, by the same module.)"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import stat
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import duckdb
import pytest

from lab import PROJECT, QUICK_APPLIED, LabRun

pytestmark = pytest.mark.lab

RUN_ID = "20261122T034500Z-7e57ed"
DEAD_RUN_ID = "20261121T220000Z-deadbe"
MIB = 1 << 20
CAPS = {"collect_max_bytes": 8 * MIB, "collect_max_files": 200}
FAST = {"kernels_samples": 3, "kernels_min_sample_ms": 2, **CAPS}


def lock_plugin():
    """The tuning role's action plugin, which names a run's controller process."""
    spec = importlib.util.spec_from_file_location("tuning_lock_plugin", PROJECT / "plugins/action/fleetscope_knob.py")
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    return plugin


class Zeros(io.RawIOBase):
    def readinto(self, buffer):
        buffer[:] = bytes(len(buffer))
        return len(buffer)


def hostile_archive(path: Path, members: list[tuple[str, bytes, dict]]) -> Path:
    """A gzip'd tar, as a host's `tar -C bundle -czf` would write it, with these members."""
    with tarfile.open(path, "w:gz") as tar:
        for name, kind, attrs in members:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.linkname = kind, attrs.get("mode", 0o600), attrs.get("linkname", "")
            info.size = attrs.get("size", 0)
            tar.addfile(info, attrs.get("stream", io.BytesIO(b"")) if kind == tarfile.REGTYPE else None)
    return path


def leave_tuned_by_a_dead_run(lab, host) -> None:
    """What a run killed after tuning leaves: its lock, naming an ansible-playbook that is gone, and
    the host's knobs tuned. Written by the real module on the host."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    owner = dict(lock_plugin().run_owner(), pid=gone.pid)
    args = {"action": "apply", "state_file": "/var/lib/fleetscope/tuning-state.json", "run_id": DEAD_RUN_ID,
            "owner": owner, "knobs": QUICK_APPLIED}
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible"), "-i", str(lab.inventory), host.name,
                           "-M", "plugins/modules", "-m", "fleetscope_knob", "-a", json.dumps(args), "-o"],
                          # the module alone, with the given owner: not through plugins/action's fleetscope_knob
                          cwd=PROJECT, env=dict(LabRun.env(), ANSIBLE_ACTION_PLUGINS=str(PROJECT / "tests")),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert host.knobs() == QUICK_APPLIED
    (host.path(f"/var/tmp/fleetscope-{DEAD_RUN_ID}-k3v9q2") / "kernels").mkdir(parents=True)


class Squatter(threading.Thread):
    """Another user on a host who keeps /var/tmp/fleetscope-<run_id>/kernels there, world-writable,
    ready for root to build in, and notes anything that appears inside it."""

    def __init__(self, host):
        super().__init__(daemon=True)
        self.top = host.path(f"/var/tmp/fleetscope-{RUN_ID}")
        self.kernels = self.top / "kernels"
        self.seen: set[str] = set()
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                for path in (self.top, self.kernels):
                    if not path.exists():
                        path.mkdir(mode=0o777)
                        os.chown(path, 65534, 65534)
                        path.chmod(0o777)
                self.seen.update(entry.name for entry in self.kernels.iterdir())
            except OSError:
                pass  # root removed it meanwhile: plant it again
            time.sleep(0.002)

    def remove(self):
        self.stop.set()
        self.join(timeout=5)
        subprocess.run(["rm", "-rf", str(self.top)], check=True)


def results_tree(results: Path) -> dict[str, tuple[int, int, bytes | str | None]]:
    found = {}
    for path in sorted(results.rglob("*")):
        info = path.lstat()
        kind = stat.S_IFMT(info.st_mode)
        content = path.read_bytes() if kind == stat.S_IFREG else os.readlink(path) if kind == stat.S_IFLNK else None
        found[str(path.relative_to(results))] = (kind, stat.S_IMODE(info.st_mode), content)
    return found


def flat(text: str) -> str:
    """Ansible's output with its line wrapping undone."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def runs(lab, tmp_path_factory):
    root = tmp_path_factory.mktemp("trust")
    run = LabRun(root, lab.inventory)
    fslab1, fslab2, fslab3 = lab["fslab1"], lab["fslab2"], lab["fslab3"]
    links = hostile_archive(fslab1.dir / "links.tar.gz", [
        (".", tarfile.DIRTYPE, {"mode": 0o700}), ("./manifest.json", tarfile.REGTYPE, {}),
        ("./raw/leak", tarfile.SYMTYPE, {"linkname": "/etc/shadow"}),
        ("./up", tarfile.SYMTYPE, {"linkname": "../fslab2"})])
    bomb = hostile_archive(fslab3.dir / "bomb.tar.gz", [
        (".", tarfile.DIRTYPE, {"mode": 0o700}),
        ("./results/zero_queue.jsonl", tarfile.REGTYPE, {"size": 64 * MIB, "stream": Zeros()})])
    leave_tuned_by_a_dead_run(lab, fslab1)
    fslab1.send_bundle(links)
    fslab3.send_bundle(bomb)
    squatter = Squatter(fslab2)
    squatter.start()
    try:
        first = run.run("site.yml", "--tags", "zero_queue", "-e", f"fleet_run_id={RUN_ID}", "-e", json.dumps(FAST))
    finally:
        squatter.remove()
        fslab1.send_bundle(None)
        fslab3.send_bundle(None)
    tree, manifests = results_tree(run.results), run.manifests()
    # the same run again on fslab2, whose archive now holds no manifest (what tarfile also makes of an
    # archive with a corrupt header before it)
    no_manifest = hostile_archive(fslab2.dir / "no-manifest.tar.gz", [
        (".", tarfile.DIRTYPE, {"mode": 0o700}), ("./results", tarfile.DIRTYPE, {"mode": 0o700})])
    fslab2.send_bundle(no_manifest)
    try:
        again = run.run("site.yml", "--tags", "zero_queue", "--limit", "fslab2,localhost", "-e", f"fleet_run_id={RUN_ID}",
                        "-e", json.dumps(FAST))
    finally:
        fslab2.send_bundle(None)
    return {"run": run, "first": first, "tree": tree, "manifests": manifests, "again": again,
            "tree_again": results_tree(run.results), "squatter": squatter, "bomb_bytes": bomb.stat().st_size}


def test_hostile_bundles_are_refused_and_the_honest_host_is_collected_and_reported(runs, hosts_as_found):
    run, first = runs["run"], runs["first"]
    assert first.returncode != 0, "the refused hosts fail the run"
    output = flat(first.stdout + first.stderr)
    for host in ("fslab1", "fslab3"):
        assert f"{host}: bundle refused, nothing of it was kept" in output
    assert runs["bomb_bytes"] < MIB / 4  # a small archive, a 64 MiB expansion
    manifests = runs["manifests"]
    assert manifests["fslab2"]["status"] == "complete"
    for host, reason in (
            ("fslab1", "fslab1: bundle refused, nothing of it was kept: member './raw/leak' is a symbolic link "
                       "(to '/etc/shadow'); a bundle holds regular files and folders only"),
            ("fslab3", f"fslab3: bundle refused, nothing of it was kept: the archive unpacks to more than "
                       f"{8 * MIB} bytes (collect_max_bytes)")):
        assert manifests[host]["status"] == "failed" and reason in manifests[host]["error"], manifests[host]
        assert "stage collect failed" in manifests[host]["error"]
    tree = runs["tree"]
    assert {name for name in tree if name.count("/") >= 2 and not name.startswith(f"{RUN_ID}/fslab2/")} == {
        f"{RUN_ID}/fslab1/manifest.json", f"{RUN_ID}/fslab3/manifest.json"}, "a refused bundle is a manifest alone"
    with duckdb.connect(str(run.warehouse), read_only=True) as db:
        assert db.execute("select status from runs where host = 'fslab2'").fetchone() == ("complete",)
    assert (run.reports / "fslab2.html").exists()


def test_nothing_is_written_outside_each_host_s_folder(runs):
    for name, (kind, mode, _) in runs["tree"].items():
        assert kind in (stat.S_IFREG, stat.S_IFDIR), f"{name} is neither a file nor a folder"
        assert not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH), name
        parts = name.split("/")
        assert parts[0] == RUN_ID and (len(parts) == 1 or parts[1] in ("fslab1", "fslab2", "fslab3")), name
    assert len([name for name in runs["tree"] if name.startswith(f"{RUN_ID}/fslab2/")]) > 3, "fslab2's bundle"


def test_a_dead_run_s_lock_is_taken_over_and_its_originals_restored(runs, lab):
    output = flat(runs["first"].stdout + runs["first"].stderr)
    assert f"was left by run {DEAD_RUN_ID}, which is no longer running" in output
    knobs = {k["name"]: k for k in runs["manifests"]["fslab1"]["knobs"] if k["name"] in QUICK_APPLIED}
    originals = lab["fslab1"].originals
    assert {name: k["before"] for name, k in knobs.items()} == originals, "the dead run's originals"
    assert {name: k["after"] for name, k in knobs.items()} == originals
    assert not lab["fslab1"].path(f"/var/tmp/fleetscope-{DEAD_RUN_ID}-k3v9q2").exists(), "the dead run's scratch"


def test_an_archive_without_a_manifest_is_refused_and_the_complete_attempt_kept(runs):
    """Issue 27 item 6 through the real play: the second attempt's archive is refused naming the reason,
    fslab2 fails, and its complete first attempt is still its bundle, byte for byte."""
    again = runs["again"]
    output = flat(again.stdout + again.stderr)
    assert again.returncode != 0
    assert "fslab2: bundle refused, nothing of it was kept: the archive holds no manifest.json" in output
    assert f"the earlier attempt of run {RUN_ID}" in output and "measured and is kept as it was" in output
    fslab2 = f"{RUN_ID}/fslab2"
    assert {name: entry for name, entry in runs["tree_again"].items() if name.startswith(fslab2)} == \
        {name: entry for name, entry in runs["tree"].items() if name.startswith(fslab2)}


def test_a_directory_planted_where_the_scratch_used_to_be_is_never_used(runs):
    squatter = runs["squatter"]
    assert squatter.seen == set(), f"the run put {sorted(squatter.seen)} in another user's folder"
    assert runs["manifests"]["fslab2"]["status"] == "complete"
    assert f"/var/tmp/fleetscope-{RUN_ID} (uid 65534, mode 0777) is named like this run's scratch directory" in \
        flat(runs["first"].stdout + runs["first"].stderr)
