"""The mlc role through `site.yml --tags mlc` on this machine. MLC is licensed and not here, so the runs
use tests/fixtures/mlc_standin: a replay of real MLC outputs packed like the official archive, which
tests the role's plumbing (sha256, unpacking, argv per mode and cache level, msr, hugepages, raw files,
the record, the views and the page), not MLC."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tarfile
from pathlib import Path

import duckdb
import pytest

from helpers import PROJECT, Outputs, run_playbook

pytestmark = pytest.mark.functional

STANDIN = PROJECT / "tests" / "fixtures" / "mlc_standin" / "mlc"
SAMPLES = PROJECT / "tests" / "fixtures" / "mlc_samples"
QUICK_PROFILE_HUGEPAGES = 128  # roles/tuning/vars/main.yml, quick


def sysfs_cache_sizes(cpu: int = 0) -> dict[str, int]:
    """This host's data/unified cache sizes as cpu0 sees them: {'L1d': 32768, 'L2': ..., 'L3': ...}."""
    sizes = {}
    for index in sorted(Path(f"/sys/devices/system/cpu/cpu{cpu}/cache").glob("index[0-9]*")):
        kind = (index / "type").read_text().strip()
        if kind == "Instruction":
            continue
        level = int((index / "level").read_text())
        text = (index / "size").read_text().strip()
        size = int(text[:-1]) * {"K": 1024, "M": 1 << 20}[text[-1]]
        sizes.setdefault(f"L{level}d" if kind == "Data" else f"L{level}", size)
    return sizes


def expected_buffers_kib() -> dict[str, int]:
    """Half L1d, then the geometric midpoint of each level and the one below, in whole KiB."""
    levels = list(sysfs_cache_sizes().items())
    expected = {levels[0][0]: levels[0][1] // 2 // 1024}
    for (_, below), (label, size) in zip(levels, levels[1:]):
        expected[label] = math.isqrt(below * size) // 1024
    return expected


def standin_archive(where: Path) -> Path:
    """An archive laid out like Intel's mlc_v3.x.tgz, with the replay script as Linux/mlc."""
    tree = where / "mlc_tree"
    (tree / "Linux").mkdir(parents=True)
    (tree / "Windows").mkdir()
    shutil.copy2(STANDIN, tree / "Linux" / "mlc")
    (tree / "Windows" / "mlc.exe").write_text("stand-in, not a Windows binary\n")
    archive = where / "mlc_v3.11b.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree / "Linux", arcname="Linux")
        tar.add(tree / "Windows", arcname="Windows")
    return archive


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def standin_env(monkeypatch, tmp_path) -> Path:
    """The stand-in's environment (inherited by ansible-playbook's local connection); returns its log."""
    log = tmp_path / "standin.log"
    monkeypatch.setenv("MLC_STANDIN_SAMPLES", str(SAMPLES))
    monkeypatch.setenv("MLC_STANDIN_LOG", str(log))
    monkeypatch.delenv("MLC_STANDIN_FAIL_MODE", raising=False)
    return log


def run_mlc(outputs: Outputs, *args: str, **variables) -> dict:
    """site.yml --tags mlc (or other args) with mlc_* variables; returns the mlc experiment record."""
    proc = run_playbook("site.yml", outputs, *(args or ("--tags", "mlc")), "-e", json.dumps(variables))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    (record,) = [e for e in outputs.manifest()["experiments"] if e["name"] == "mlc"]
    return record


def knob(manifest: dict, name: str) -> dict:
    return next(k for k in manifest["knobs"] if k["name"] == name)


def query(outputs: Outputs, sql: str) -> list[tuple]:
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        return db.execute(sql).fetchall()


def read_log(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_without_mlc_the_skip_is_recorded_with_how_to_supply_it(outputs, knobs_unchanged, standin_env):
    record = run_mlc(outputs)
    assert record["status"] == "skipped" and record["raw"] == []
    (note,) = record["notes"]
    assert "mlc_path" in note and "mlc_sha256" in note and "intel.com" in note
    assert not read_log(standin_env)
    # without MLC the tuning role reserves only the profile's huge pages
    assert knob(outputs.manifest(), "nr_hugepages")["applied"] == str(QUICK_PROFILE_HUGEPAGES)
    assert query(outputs, "SELECT status FROM experiments WHERE experiment = 'mlc'") == [("skipped",)]
    page = (outputs.reports / "localhost.html").read_text()
    assert 'id="mlc-notes"' in page and "Not run:" in page and "-e mlc_path=" in page
    assert 'id="mlc-bandwidth"' not in page  # the experiment's notes are shown once, in its first section


def test_supplied_archive_runs_every_quick_mode_and_keeps_outputs_verbatim(outputs, knobs_unchanged, standin_env,
                                                                           tmp_path):
    archive = standin_archive(tmp_path)
    msr_before = os.path.exists("/sys/module/msr")
    record = run_mlc(outputs, mlc_path=str(archive), mlc_sha256=sha256(archive).upper())
    assert record["status"] == "ok", record["error"]
    bundle = outputs.bundles()[0]

    # one process per mode and per cache level, -b from this host's sysfs, MLC's default DRAM buffer
    log = read_log(standin_env)
    argv = [entry["argv"] for entry in log]
    idle = {a[1]: a for a in argv if a[0] == "--idle_latency" and a[1].startswith("-b")}
    assert [int(b[2:]) for b in idle] == list(expected_buffers_kib().values())
    assert ["--idle_latency", "-t1", "-c0"] in argv
    assert [a[0] for a in argv if a[0] != "--idle_latency"] == [
        "--loaded_latency", "--peak_injection_bandwidth", "--c2c_latency"]

    # every stdout kept byte for byte, named in the record with its command line
    raw = {entry["path"]: entry["params"] for entry in record["raw"]}
    assert set(raw) == {f"raw/mlc/idle_latency_{level}.txt" for level in [*expected_buffers_kib(), "DRAM"]} | {
        "raw/mlc/loaded_latency.txt", "raw/mlc/peak_injection_bandwidth.txt", "raw/mlc/c2c_latency.txt"}
    assert (bundle / "raw/mlc/idle_latency_DRAM.txt").read_bytes() == \
        (SAMPLES / "cml_i7-10850H_v3.11a_idle_latency.txt").read_bytes()
    assert (bundle / "raw/mlc/loaded_latency.txt").read_bytes() == \
        (SAMPLES / "cml_i7-10750H_v3.11b_loaded_latency_t4_c0.txt").read_bytes()
    assert raw["raw/mlc/idle_latency_L1d.txt"]["command_line"].endswith("/Linux/mlc --idle_latency -b"
                                                                       f"{expected_buffers_kib()['L1d']} -t1 -c0")
    assert all(params["exit_status"] == 0 for params in raw.values())

    # msr: the notes say whether the driver was there for MLC, as the stand-in saw it, and a driver this
    # run loaded is unloaded again
    msr = next(note for note in record["notes"] if note.startswith("msr:"))
    assert ("did not work" in msr) == (not log[0]["msr_loaded"])
    assert os.path.exists("/sys/module/msr") == msr_before

    # hugepages: raised for MLC while it ran, restored afterwards (knobs_unchanged checks the host)
    hugepages = knob(outputs.manifest(), "nr_hugepages")
    assert int(hugepages["applied"]) > QUICK_PROFILE_HUGEPAGES
    assert {entry["nr_hugepages"] for entry in log} == {int(hugepages["applied"])}
    assert hugepages["after"] == hugepages["before"]
    assert any(note.startswith(f"hugepages: {hugepages['applied']} x") for note in record["notes"])

    # the warehouse views and the page
    levels = query(outputs, "SELECT level, latency_ns FROM mlc_idle_latency")
    assert [level for level, _ in levels] == [*expected_buffers_kib(), "DRAM"]
    assert query(outputs, "SELECT count(*), min(delay_cycles), max(delay_cycles) FROM mlc_loaded_latency") == [
        (19, 0, 20000)]
    assert query(outputs, "SELECT count(*) FROM mlc_bandwidth WHERE mode = 'peak_injection_bandwidth'") == [(5,)]
    assert query(outputs, "SELECT count(*) FROM mlc_matrix WHERE mode = 'c2c_latency'") == [(6,)]
    page = (outputs.reports / "localhost.html").read_text()
    for element in ("mlc-chart", "mlc-table", "mlc-extra-table", "mlc-bandwidth-chart", "mlc-bandwidth-extra-table"):
        assert f'id="{element}"' in page, element


def test_a_wrong_sha256_fails_the_experiment_and_runs_nothing(outputs, knobs_unchanged, standin_env, tmp_path):
    archive = standin_archive(tmp_path)
    wrong = "0" * 64
    record = run_mlc(outputs, mlc_path=str(archive), mlc_sha256=wrong)
    assert record["status"] == "failed" and record["raw"] == []
    error = record["error"]
    assert str(archive) in error and wrong in error and sha256(archive) in error
    assert "sha256sum" in error and "mlc_sha256" in error
    assert not read_log(standin_env), "MLC must not run when its file does not match mlc_sha256"
    assert query(outputs, "SELECT status FROM experiments WHERE experiment = 'mlc'") == [("failed",)]


def test_an_mlc_dying_half_way_keeps_what_was_measured(outputs, knobs_unchanged, standin_env, monkeypatch):
    monkeypatch.setenv("MLC_STANDIN_FAIL_MODE", "loaded_latency")
    record = run_mlc(outputs, mlc_path=str(STANDIN))  # the bare binary, not pinned by a sha256
    assert record["status"] == "failed"
    assert "loaded_latency" in record["error"] and "exit 1" in record["error"] and "killed half way" in record["error"]
    assert any("not pinned" in note for note in record["notes"])
    raw = {entry["path"]: entry["params"]["exit_status"] for entry in record["raw"]}
    assert raw["raw/mlc/loaded_latency.txt"] == 1  # what it printed before dying is kept
    assert raw["raw/mlc/idle_latency_DRAM.txt"] == 0 and raw["raw/mlc/c2c_latency.txt"] == 0  # before and after
    assert outputs.manifest()["status"] == "partial"
    assert query(outputs, "SELECT truncated FROM raw_outputs WHERE path = 'raw/mlc/loaded_latency.txt'") == [(True,)]
    assert query(outputs, "SELECT count(*) FROM mlc_idle_latency") == [(len(expected_buffers_kib()) + 1,)]
    assert query(outputs, "SELECT bool_and(run_truncated), count(*) < 19 FROM mlc_loaded_latency") == [(True, True)]
