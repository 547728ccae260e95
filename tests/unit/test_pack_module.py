"""The collect role's host-side pack (plugins/modules/fleetscope_pack.py): the manifest it writes from what the
bundle holds, and the archive it packs and refuses over the cap, run by a real ansible-playbook on this machine."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
# the collection's action plugin, by path (importing ansible_collections here would keep Ansible's collection
# finder from loading the collection in the tests that set it up)
_spec = importlib.util.spec_from_file_location("fleetscope_pack_action", PROJECT / "plugins/action/fleetscope_pack.py")
_action = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_action)
Refused, decoded = _action.Refused, _action.decoded

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Pack
      fleetscope.fleet.fleetscope_pack:{bundle}
        host: node1
        max_bytes: {max_bytes}
        manifest: {manifest}{home}
      register: packed
      ignore_errors: true
    - name: Keep what it returned
      ansible.builtin.copy:
        content: "{{{{ packed | to_json }}}}"
        dest: {out}
        mode: "0600"
"""

EXPERIMENTS = [
    {"name": "latency_sweep", "status": "ok", "file": "results/latency_sweep.jsonl", "wall_s": "12",
     "raw": [{"tool": "perf", "path": "raw/perf/latency_sweep/000.csv"},
             {"tool": "perf", "path": "raw/perf/latency_sweep/001.csv"}]},
    {"name": "tlb", "status": "skipped", "file": "results/tlb.jsonl", "error": "no huge pages"},
]


def bundle(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    (folder / "results").mkdir(parents=True)
    (folder / "raw" / "perf" / "latency_sweep").mkdir(parents=True)
    (folder / "results" / "latency_sweep.jsonl").write_text('{"point": 1}\n')
    (folder / "raw" / "perf" / "latency_sweep" / "000.csv").write_text("1,cycles\n")
    # a link is not a file the bundle holds: the experiment's raw output it names is left out
    os.symlink("/etc/hostname", folder / "raw" / "perf" / "latency_sweep" / "001.csv")
    return folder


def pack(tmp_path: Path, folder: Path, max_bytes: int, error: str | None = None, dest: Path | None = None,
         bundle: bool = True) -> dict:
    out, archive = tmp_path / "out.json", tmp_path / "bundle.tar.gz"
    manifest = {"bundle_schema": 1, "run_id": "20261128T120000Z-abcdef", "host": "node1", "error": error,
                "experiments": EXPERIMENTS}
    book = tmp_path / "book.yml"
    where = f"\n        bundle: {folder}\n        archive: {archive}" if bundle else ""
    book.write_text(PLAYBOOK.format(bundle=where, max_bytes=max_bytes, out=out,
                                    manifest=json.dumps(manifest),
                                    home=f"\n        dest: {dest}\n        max_files: 100" if dest else ""))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(book)], cwd=PROJECT, env=env,
                          capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("pack")
    folder = bundle(tmp_path)
    return tmp_path, folder, pack(tmp_path, folder, 1 << 20)


def test_the_manifest_names_only_the_files_the_bundle_holds(packed):
    _, folder, result = packed
    assert not result.get("failed") and result["changed"]
    assert result["files"] == ["raw/perf/latency_sweep/000.csv", "results/latency_sweep.jsonl"]
    manifest = json.loads((folder / "manifest.json").read_text())
    sweep, tlb = manifest["experiments"]
    assert sweep["file"] == "results/latency_sweep.jsonl" and sweep["wall_s"] == 12.0
    assert sweep["raw"] == [{"tool": "perf", "path": "raw/perf/latency_sweep/000.csv"}]
    assert tlb["file"] is None
    # one experiment measured, one skipped, no stage failed: complete
    assert manifest["status"] == result["status"] == "complete"
    assert ((folder / "manifest.json").stat().st_mode & 0o777) == 0o600


def test_the_archive_holds_the_bundle_with_its_top_folder_first(packed):
    tmp_path, _, result = packed
    archive = tmp_path / "bundle.tar.gz"
    assert result["size"] == archive.stat().st_size
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert names[0] == "."
    assert {"./manifest.json", "./results/latency_sweep.jsonl", "./raw/perf/latency_sweep/000.csv"} <= set(names)


def test_a_stage_error_makes_the_run_partial_and_an_archive_over_the_cap_is_refused_on_the_host(tmp_path):
    folder = bundle(tmp_path)
    result = pack(tmp_path, folder, 64, error="stage restore failed")
    assert result["failed"]
    size = (tmp_path / "bundle.tar.gz").stat().st_size
    assert result["msg"] == (f"node1: bundle refused, nothing of it was kept: the archive alone is {size} bytes, "
                             "more than collect_max_bytes (64)")
    assert json.loads((folder / "manifest.json").read_text())["status"] == "partial"


def test_a_manifest_planted_as_a_link_is_not_written_through(tmp_path):
    folder = bundle(tmp_path)
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    os.symlink(target, folder / "manifest.json")
    result = pack(tmp_path, folder, 1 << 20)
    assert result["failed"] and result["msg"].startswith("node1: the bundle's manifest could not be written: ")
    assert "manifest.json" in result["msg"]
    assert target.read_text() == "{}" and not (tmp_path / "bundle.tar.gz").exists()


def test_with_dest_the_bundle_comes_home_in_the_same_task(tmp_path):
    """The action plugin unpacks the module's reply into dest with fleetscope_bundle's checks; the archive's
    content never stays in the task's result, and the copy it wrote on the controller is removed."""
    folder = bundle(tmp_path)
    (folder / "raw" / "perf" / "latency_sweep" / "001.csv").unlink()
    dest = tmp_path / "results" / "run" / "node1"
    result = pack(tmp_path, folder, 1 << 20, dest=dest)
    assert not result.get("failed") and "content" not in result, result.get("msg")
    assert result["unpacked"]["files"] >= 3
    assert json.loads((dest / "manifest.json").read_text())["status"] == "complete"
    assert (dest / "results" / "latency_sweep.jsonl").read_text() == '{"point": 1}\n'
    assert sorted(path.name for path in dest.parent.iterdir()) == ["node1"]


def test_a_bundle_the_controller_refuses_is_refused_whole_in_the_same_task(tmp_path):
    """The host's tar packs the link; the controller's checks refuse the whole archive and keep nothing."""
    folder = bundle(tmp_path)
    dest = tmp_path / "results" / "run" / "node1"
    result = pack(tmp_path, folder, 1 << 20, dest=dest)
    assert result["failed"] and "content" not in result
    assert result["msg"] == ("node1: bundle refused, nothing of it was kept: member './raw/perf/latency_sweep/001.csv' "
                             "is a symbolic link (to '/etc/hostname'); a bundle holds regular files and folders only")
    assert_failed_manifest_only(dest, result, f"stage collect failed in 'Pack': {result['msg']}")


def assert_failed_manifest_only(dest: Path, result: dict, error: str) -> None:
    """dest holds the host's failed manifest alone, whose error (the task's stage_error) says why."""
    assert sorted(path.name for path in dest.parent.iterdir()) == ["node1"]
    assert [path.name for path in dest.iterdir()] == ["manifest.json"]
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["error"] == error == result["stage_error"]
    assert manifest["host"] == "node1" and all(record["status"] == "failed" and record["error"] == error
                                               for record in manifest["experiments"])


def test_an_archive_over_the_cap_is_refused_on_the_host_and_nothing_comes_home(tmp_path):
    folder = bundle(tmp_path)
    dest = tmp_path / "results" / "run" / "node1"
    result = pack(tmp_path, folder, 64, error="stage build failed", dest=dest)
    assert result["failed"] and "more than collect_max_bytes (64)" in result["msg"]
    assert_failed_manifest_only(dest, result, f"stage build failed; stage collect failed in 'Pack': {result['msg']}")


def test_a_host_without_a_scratch_directory_gets_its_failed_manifest_and_the_task_succeeds(tmp_path):
    """No bundle on the host (it failed before tune made its scratch directory): nothing is asked of the host, the
    failed manifest says the stage that failed, and that failure, not collect, fails the host later."""
    dest = tmp_path / "results" / "run" / "node1"
    result = pack(tmp_path, tmp_path / "never", 1 << 20, error="stage tune failed in 'Take the lock': in use",
                  dest=dest, bundle=False)
    assert not result.get("failed") and result["changed"]
    manifest = json.loads((dest / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["error"] == "stage tune failed in 'Take the lock': in use"
    assert [path.name for path in dest.iterdir()] == ["manifest.json"] and not (tmp_path / "bundle.tar.gz").exists()


@pytest.mark.parametrize("content, why", [
    (None, "the archive's content is missing from the host's reply"),
    ({"a": 1}, "the archive's content is missing from the host's reply"),
    ("not base64!", "the archive's content is not base64"),
    ("A" * 1000, "the archive is larger than collect_max_bytes (100)"),  # longer than base64 of the cap
    ("AAAA" * 34, "the archive is larger than collect_max_bytes (100)"),  # within it, decodes to 102 bytes
])
def test_a_reply_that_is_not_an_archive_within_the_cap_is_refused_before_anything_is_written(content, why):
    with pytest.raises(Refused, match=f"^{why.replace('(', '[(]').replace(')', '[)]')}$"):
        decoded(content, 100)
    assert decoded("AAAA" * 33, 100) == bytes(99)
