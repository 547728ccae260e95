"""The facts module on Arm (issue 29): read against the DGX Spark GB10's sysfs and /proc/cpuinfo
(tests/fixtures/sysfs/arm-gb10-biglittle), whose /proc/cpuinfo has no model name, vendor_id or flags
but MIDR fields and Features; and against a copy of it whose sysfs lists no caches, as some Arm
servers' firmware and many VMs leave it."""

from __future__ import annotations

import json
import shutil

import pytest
import sysfs_facts

from fleetscope.ingest.bundle import _schema_problem, _schema_validator

GB10 = sysfs_facts.SYSFS / "arm-gb10-biglittle"
DEFAULT_RUN_MANIFEST = next((sysfs_facts.SYSFS.parent / "default_run" / "results").glob("*/*/manifest.json"))


@pytest.fixture
def facts_at(monkeypatch):
    module = sysfs_facts.facts_module()

    def read(root):
        monkeypatch.setenv("FLEETSCOPE_SYSFS_ROOT", str(root))
        topology = module.topology_facts()
        return module.cpu_facts(topology), module.cache_facts(topology)
    return read


def test_arm_cpu_named_from_its_midr_and_features(facts_at):
    cpu, caches = facts_at(GB10)
    assert cpu["architecture"] == "aarch64"
    assert (cpu["implementer"], cpu["parts"]) == ("0x41", ["0xd87", "0xd85"])
    assert cpu["vendor"] == "ARM"
    # a copy of another machine's sysfs: no lscpu to ask, so the MIDR numbers (host_identity names them)
    assert cpu["model_name"] == "ARM part 0xd87 + 0xd85"
    assert cpu["vector_extensions"] == ["asimd", "sve", "sve2"]  # from Features: Arm has no "flags" line
    assert cpu["hypervisor_flag"] is None  # x86's cpuid bit has no Arm counterpart: not False
    assert cpu["tsc_mhz"] is None and cpu["family"] is None
    assert caches["caches_note"] is None and caches["caches"][0]["level"] == 1


def test_x86_keeps_its_own_fields(facts_at):
    cpu, _ = facts_at(sysfs_facts.SYSFS / "intel-xeon-e5-2node")
    assert (cpu["architecture"], cpu["vendor"]) == ("x86_64", "GenuineIntel")
    assert cpu["hypervisor_flag"] is False and "avx" in cpu["vector_extensions"]
    assert "implementer" not in cpu


def test_an_unknown_implementer_is_named_by_its_code(facts_at, tmp_path):
    root = tmp_path / "arm"
    shutil.copytree(GB10, root)
    cpuinfo = root / "proc" / "cpuinfo"
    cpuinfo.write_text(cpuinfo.read_text().replace("CPU implementer\t: 0x41", "CPU implementer\t: 0x99"))
    cpu, _ = facts_at(root)
    assert cpu["vendor"] == "implementer 0x99"


def test_no_caches_in_sysfs_are_recorded_as_such(facts_at, tmp_path):
    root = tmp_path / "arm-no-caches"
    shutil.copytree(GB10, root)
    for cache in (root / "sys" / "devices" / "system" / "cpu").glob("cpu[0-9]*/cache"):
        shutil.rmtree(cache)
    cpu, caches = facts_at(root)
    assert caches["caches"] == []
    assert "sysfs lists no caches" in caches["caches_note"] and "not recorded" in caches["caches_note"]
    assert cpu["parts"] == ["0xd87", "0xd85"]  # the rest of the facts stand


def test_manifest_schema_takes_the_arm_facts(facts_at):
    cpu, caches = facts_at(GB10)
    validator = _schema_validator("manifest.schema.json")
    manifest = json.loads(DEFAULT_RUN_MANIFEST.read_text())
    assert _schema_problem(validator, manifest) is None
    manifest["facts"].update(cpu=cpu, **caches)
    assert _schema_problem(validator, manifest) is None
