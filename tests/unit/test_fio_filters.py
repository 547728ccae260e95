"""The fio role's filters: job plan, probe verdicts on real fio runs, the free-space check, raw entries,
diskspd's command line, and the experiment selection the role shares with the kernels role."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make test installs it)")


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_plugin_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


storage = _load(PROJECT / "plugins/filter/storage.py")
experiments = _load(PROJECT / "plugins/filter/experiments.py")
ALL_PATTERNS = ["randread", "randwrite", "randrw", "seqread", "seqwrite"]


def plan(patterns=ALL_PATTERNS, depths=(1, 16), random_bs=4096, seq_bs=1048576, seq_depth=8, mix=70):
    return storage.fio_plan(patterns, list(depths), random_bs, seq_bs, seq_depth, mix)


def test_the_quick_plan_is_every_random_pattern_at_each_depth_and_sequential_once():
    jobs = plan()
    assert [job["name"] for job in jobs] == [
        "randread_4k_qd1", "randread_4k_qd16", "randwrite_4k_qd1", "randwrite_4k_qd16",
        "randrw70_4k_qd1", "randrw70_4k_qd16", "seqread_1m_qd8", "seqwrite_1m_qd8"]
    mixed = [job for job in jobs if job["pattern"] == "randrw"]
    assert {job["rwmixread"] for job in mixed} == {70} and {job["rw"] for job in mixed} == {"randrw"}
    assert all(job["rwmixread"] is None for job in jobs if job["pattern"] != "randrw")
    seq = {job["pattern"]: job for job in jobs if job["access"] == "sequential"}
    assert seq["seqread"]["rw"] == "read" and seq["seqwrite"]["rw"] == "write"
    assert seq["seqread"]["block_size_bytes"] == 1048576 and seq["seqread"]["iodepth"] == 8


def test_the_standard_plan_sorts_and_deduplicates_depths():
    jobs = plan(patterns=["randread"], depths=(64, 1, 16, 4, 16))
    assert [job["iodepth"] for job in jobs] == [1, 4, 16, 64]
    assert plan(patterns=["randrw"], depths=(1,), random_bs=8192, mix=50)[0]["name"] == "randrw50_8k_qd1"


@pytest.mark.parametrize("arguments, message", [
    ({"patterns": ["randomread"]}, "unknown fio pattern 'randomread'"),
    ({"depths": ()}, "fio_queue_depths is empty"),
    ({"depths": (0,)}, "fio_queue_depths[] must be a positive integer"),
    ({"mix": 100}, "fio_rwmixread must be between 1 and 99"),
    ({"random_bs": True}, "fio_random_block_size must be a positive integer"),
])
def test_the_plan_refuses_what_fio_cannot_run(arguments, message):
    with pytest.raises(ValueError) as error:
        plan(**arguments)
    assert message in str(error.value)


def test_filenames_are_escaped_for_fio_or_refused():
    assert storage.fio_filename("/var/tmp/a:b/file") == "/var/tmp/a\\:b/file"
    for bad in ("/tmp/a\nb", "/tmp/${HOME}/x", ""):
        with pytest.raises(ValueError):
            storage.fio_filename(bad)


def test_the_free_space_message_says_what_is_free_needed_and_what_to_change():
    assert storage.fio_free_space_error("2000000000", 268435456, 536870912, "/var/tmp/x") == ""
    message = storage.fio_free_space_error(1 << 30, 1 << 40, 1 << 29, "/var/tmp/x")
    assert "/var/tmp/x" in message and "1.0 GiB (1073741824 bytes) free" in message
    assert "1.0 TiB" in message and "needed" in message
    assert "fio_size" in message and "fio_directory" in message and "fio_free_space_margin" in message


def _probe(target: Path, engine: str, direct: int) -> dict:
    """The role's probe command, run for real, shaped like Ansible's command result."""
    argv = [FIO, f"--filename={storage.fio_filename(target)}", f"--size={target.stat().st_size}", "--rw=randread",
            "--bs=4096", "--io_size=262144", "--readonly", "--output-format=json", "--eta=never",
            "--name=fleetscope_engine_probe", f"--ioengine={engine}", "--iodepth=4", f"--direct={direct}"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return {"item": engine, "rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr, "failed": False}


@pytest.fixture
def scratch_file(tmp_path) -> Path:
    path = tmp_path / "probe.dat"
    path.write_bytes(os.urandom(1 << 20))
    return path


@needs_fio
def test_the_first_engine_that_runs_is_chosen_and_the_refusals_are_noted(scratch_file):
    engines = ["fleetscope_no_such_engine", "psync"]
    probes = [_probe(scratch_file, engine, 0) for engine in engines]
    assert not storage.fio_probe_ok(probes[0]) and storage.fio_probe_ok(probes[1])
    choice = storage.fio_engine_choice(probes, engines)
    assert choice["engine"] == "psync" and choice["error"] is None
    assert choice["notes"][0].startswith("ioengine psync: the first of fleetscope_no_such_engine, psync")
    refused = choice["notes"][1]
    assert refused.startswith("ioengine fleetscope_no_such_engine refused: ") and "not loadable" in refused
    assert "synchronous" in choice["notes"][2]


@needs_fio
def test_no_engine_is_an_error_naming_each_refusal(scratch_file):
    probes = [_probe(scratch_file, "fleetscope_no_such_engine", 0)]
    choice = storage.fio_engine_choice(probes, ["fleetscope_no_such_engine"])
    assert choice["engine"] is None
    assert choice["error"].startswith("no I/O engine of fio_ioengines ran on this host (fleetscope_no_such_engine: ")


@needs_fio
def test_direct_io_is_used_where_the_probe_ran(scratch_file):
    choice = storage.fio_direct_choice("auto", _probe(scratch_file, "psync", 1), str(scratch_file))
    assert choice == {"direct": True, "error": None, "note": "direct I/O (O_DIRECT): the page cache is bypassed"}
    assert storage.fio_direct_choice("buffered", None, "x")["direct"] is False


@pytest.fixture
def ramfs(tmp_path):
    """A ramfs mount: a filesystem that refuses O_DIRECT (tmpfs accepts it since Linux 6.6)."""
    mountpoint = tmp_path / "ramfs"
    mountpoint.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a ramfs needs root")
    if subprocess.run(["mount", "-t", "ramfs", "fleetscope-test", str(mountpoint)], check=False).returncode != 0:
        pytest.skip("this machine cannot mount a ramfs")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", str(mountpoint)], check=True)


@needs_fio
def test_a_filesystem_that_refuses_o_direct_falls_back_to_buffered_with_the_reason(ramfs):
    target = ramfs / "probe.dat"
    target.write_bytes(os.urandom(1 << 20))
    probe = _probe(target, "psync", 1)
    assert not storage.fio_probe_ok(probe)
    auto = storage.fio_direct_choice("auto", probe, str(target))
    assert auto["direct"] is False and auto["error"] is None
    assert auto["note"].startswith(f"buffered I/O: O_DIRECT was refused on {target} (")
    assert "O_DIRECT" in auto["note"].split("(", 1)[1]  # fio's own words: "does not support O_DIRECT"
    required = storage.fio_direct_choice("direct", probe, str(target))
    assert "fio_direct is 'direct'" in required["error"] and "fio_direct: auto" in required["error"]
    # buffered I/O runs there
    assert storage.fio_probe_ok(_probe(target, "psync", 0))


def test_raw_entries_keep_the_jobs_that_finished():
    jobs = plan(patterns=["randread"], depths=(1, 16))
    results = [{"item": jobs[0], "rc": 0, "failed": False}, {"item": jobs[1], "rc": 1, "failed": True}]
    entries = storage.fio_raw_entries(results, "fio", "json", {"ioengine": "io_uring", "direct": True,
                                                                 "nested": {"not": "flat"}})
    assert entries == [{"path": "raw/fio/randread_4k_qd1.json", "tool": "fio", "params": {
        "job": "randread_4k_qd1", "pattern": "randread", "rw": "randread", "access": "random",
        "block_size_bytes": 4096, "iodepth": 1, "rwmixread": None, "ioengine": "io_uring", "direct": True}}]
    assert storage.fio_raw_entries(results, "diskspd", "xml")[0]["path"] == "raw/diskspd/randread_4k_qd1.xml"


def test_a_failure_names_the_job_exit_status_and_stderr_tail():
    jobs = plan(patterns=["randwrite"], depths=(1,))
    looped = {"failed": True, "results": [
        {"item": jobs[0], "rc": 1, "failed": True, "stderr": "fio: io_u error\nfio: pid=1, err=28/No space left"}]}
    assert storage.fio_failure(looped) == "randwrite_4k_qd1: exit 1: fio: io_u error | fio: pid=1, err=28/No space left"
    assert storage.fio_failure({"failed": True, "msg": "not enough free space"}) == "not enough free space"


def test_diskspd_command_lines_capture_latency_in_xml():
    jobs = {job["name"]: job for job in plan()}
    argv = storage.fio_diskspd_argv(jobs["randrw70_4k_qd16"], "C:/fs/diskspd.exe", "C:/fs/f.dat", 268435456, 2, 1)
    assert argv == ["C:/fs/diskspd.exe", "-c268435456", "-b4096", "-d2", "-W1", "-o16", "-t1", "-w30", "-L", "-Rxml",
                    "-r4096", "-Sh", "C:/fs/f.dat"]
    sequential = storage.fio_diskspd_argv(jobs["seqwrite_1m_qd8"], "d.exe", "f.dat", 1 << 20, 10, 2, direct=False)
    assert "-w100" in sequential and not any(arg.startswith("-r") for arg in sequential) and "-Sh" not in sequential


@pytest.mark.parametrize("tagged, selected", [
    (["fio"], True),
    (["zero_queue", "fio"], True),
    (["latency_sweep", "c2c"], False),
    ([], False),
])
def test_fio_runs_when_its_tagged_task_ran_and_it_is_enabled(tagged, selected):
    registry = {"fio": {"enabled": True}}
    assert ("fio" in experiments.select_experiments(registry, tagged)) is selected
    registry["fio"]["enabled"] = False
    assert experiments.select_experiments(registry, tagged) == []
    with pytest.raises(ValueError, match="true or false"):
        experiments.select_experiments({"fio": {"enabled": "yes"}}, tagged)

