"""The run's scratch directory (plugins/modules/fleetscope_scratch.py): fresh, private and
unpredictable for every run; a scratch root another user controls is refused; a folder named like
the run's but not its own is never used."""

from __future__ import annotations

import importlib.util
import os
import stat
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fleetscope_scratch", PROJECT / "plugins/modules/fleetscope_scratch.py")
scratch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scratch)

RUN_A, RUN_B = "20261122T034500Z-aaaaaa", "20261122T050000Z-bbbbbb"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")


def test_a_scratch_directory_is_fresh_private_and_unpredictable(tmp_path):
    created = [scratch.create(str(tmp_path), RUN_A)["path"] for _ in range(2)]
    first, second = (Path(path) for path in created)
    assert not first.exists(), "the second attempt of the run removed the first's own leftover"
    assert second.parent == tmp_path and second.name.startswith(f"fleetscope-{RUN_A}-")
    assert len(second.name) > len(f"fleetscope-{RUN_A}-") + 5
    info = second.stat()
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.geteuid()


def test_the_folders_asked_for_come_with_the_scratch_directory_each_level_private(tmp_path):
    old_umask = os.umask(0o022)
    try:
        created = Path(scratch.create(str(tmp_path), RUN_A, folders=["kernels", "bundle/results", "bundle/raw"])["path"])
    finally:
        os.umask(old_umask)
    made = sorted(str(path.relative_to(created)) for path in created.rglob("*"))
    assert made == ["bundle", "bundle/raw", "bundle/results", "kernels"]
    assert {stat.S_IMODE((created / folder).stat().st_mode) for folder in made} == {0o700}


@pytest.mark.parametrize("folder", ["../escaped", "/etc/fleetscope", "bundle/../../escaped"])
def test_a_folder_outside_the_scratch_directory_is_refused_before_anything_is_made(tmp_path, folder):
    with pytest.raises(ValueError, match="inside the scratch directory"):
        scratch.create(str(tmp_path), RUN_A, folders=["kernels", folder])
    assert list(tmp_path.iterdir()) == []


@needs_root
def test_a_folder_named_like_the_run_s_but_not_its_own_is_never_used(tmp_path):
    squatted = tmp_path / f"fleetscope-{RUN_A}" / "kernels"
    squatted.mkdir(parents=True)
    for path in (squatted, squatted.parent):
        os.chown(path, 65534, 65534)
        path.chmod(0o777)
    created = scratch.create(str(tmp_path), RUN_A)
    assert created["foreign"] == [f"{squatted.parent} (uid 65534, mode 0777)"]
    assert Path(created["path"]) != squatted.parent and list(squatted.iterdir()) == []
    other_run = tmp_path / f"fleetscope-{RUN_B}-keep"
    other_run.mkdir()
    scratch.create(str(tmp_path), RUN_A)
    assert other_run.exists(), "another run's scratch directory is not this run's to remove"


@needs_root
@pytest.mark.parametrize("layout, problem", [
    ("owned", "belongs to uid 65534"),
    ("group-writable", "can be written by other users (mode 0775, not sticky)"),
    ("link to owned", "belongs to uid 65534"),
])
def test_a_scratch_root_another_user_controls_is_refused(tmp_path, layout, problem):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    if layout == "group-writable":
        theirs.chmod(0o775)
    else:
        os.chown(theirs, 65534, 65534)
    root = theirs
    if layout == "link to owned":
        root = tmp_path / "scratch"
        root.symlink_to(theirs)
    with pytest.raises(scratch.Unsafe) as unsafe:
        scratch.create(str(root), RUN_A)
    assert str(unsafe.value) == f"{theirs} {problem}"
    assert list(theirs.iterdir()) == []


def test_a_sticky_world_writable_root_like_var_tmp_is_accepted(tmp_path):
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    assert Path(scratch.create(str(sticky), RUN_A)["path"]).parent == sticky


def test_a_dead_run_s_scratch_directory_goes_with_its_lock(tmp_path):
    """Issue 27 item 16: a run that took over a dead run's lock restored the dead run's original knobs but
    left its scratch directory behind (that run will never remove it). Another run's stays."""
    dead = tmp_path / f"fleetscope-{RUN_B}-k3v9q2"
    (dead / "kernels").mkdir(parents=True)
    other = tmp_path / "fleetscope-20261122T060000Z-cccccc-x1"
    other.mkdir()
    created = scratch.create(str(tmp_path), RUN_A, taken_over_run_id=RUN_B)
    assert created["removed"] == [str(dead)] and not dead.exists()
    assert other.exists() and Path(created["path"]).exists()
    # an id that is no run id (it comes from the host's state file) widens nothing
    again = scratch.create(str(tmp_path), RUN_A, taken_over_run_id="20261122T060000Z")
    assert again["removed"] == [created["path"]] and other.exists()


def test_the_free_huge_pages_are_read_for_the_plan(tmp_path):
    """The module sets fleet_hugepages_free, which prices the TLB sweep's hugetlbfs points (roles/kernels)."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nHugePages_Total:     128\nHugePages_Free:      127\n")
    assert scratch.hugepages_free(str(meminfo)) == 127
    meminfo.write_text("MemTotal:       24000000 kB\n")  # a kernel without hugetlbfs has none to give
    assert scratch.hugepages_free(str(meminfo)) == 0
    assert scratch.hugepages_free(str(tmp_path / "missing")) is None
    assert isinstance(scratch.hugepages_free(), int)  # this machine's own
