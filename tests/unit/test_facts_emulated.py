"""The facts module under a user-mode emulator (issue 29, the arm64 lab host of tests/lab/arm64): qemu-user
answers uname with the userland's machine (aarch64) while /proc/cpuinfo is the kernel's and describes the
x86-64 CPU running the emulator. The facts must say so, and must not name that CPU as the host's."""

from __future__ import annotations

import json
import platform

import pytest
import sysfs_facts

from fleetscope.ingest.bundle import _schema_problem, _schema_validator

DEFAULT_RUN_MANIFEST = next((sysfs_facts.SYSFS.parent / "default_run" / "results").glob("*/*/manifest.json"))
X86_INFO = {"processor": "0", "vendor_id": "AuthenticAMD", "cpu family": "25", "model name": "AMD EPYC 9R14",
            "flags": "fpu sse2 avx avx2 hypervisor"}
ARM_INFO = {"processor": "0", "CPU implementer": "0x41", "CPU part": "0xd0c", "Features": "fp asimd"}
RISCV_INFO = {"processor": "0", "hart": "0", "isa": "rv64imafdc"}
PPC_INFO = {"processor": "0", "cpu": "POWER9 (raw), altivec supported", "revision": "2.2"}


@pytest.fixture
def module():
    return sysfs_facts.facts_module()


@pytest.mark.parametrize("machine, info, kernel", [
    ("aarch64", X86_INFO, "x86"), ("riscv64", X86_INFO, "x86"), ("ppc64le", X86_INFO, "x86"),
    ("x86_64", ARM_INFO, "arm"), ("aarch64", RISCV_INFO, "riscv"), ("aarch64", PPC_INFO, "powerpc")])
def test_a_userland_of_another_architecture_than_cpuinfo_is_emulated(module, machine, info, kernel):
    emulated = module.emulation_facts(machine, info)
    assert emulated["userland"] == machine and emulated["cpu_architecture"] == kernel
    assert "emulator" in emulated["reason"] and machine in emulated["reason"]


@pytest.mark.parametrize("machine, info", [
    ("x86_64", X86_INFO), ("aarch64", ARM_INFO), ("riscv64", RISCV_INFO), ("ppc64le", PPC_INFO),
    # a 32-bit userland on a 64-bit kernel of its own family runs natively
    ("i686", X86_INFO), ("armv7l", ARM_INFO), ("armv8l", ARM_INFO),
    # what cannot be told apart is not called emulated
    ("s390x", X86_INFO), ("aarch64", {}), ("aarch64", {"processor": "0"})])
def test_a_native_or_unknown_pairing_is_not(module, machine, info):
    assert module.emulation_facts(machine, info) is None


def test_cpu_facts_under_emulation_name_no_cpu_and_keep_the_reason(module, monkeypatch):
    """This machine's own /proc/cpuinfo (x86-64) read as an aarch64 userland under qemu-user reads it."""
    if module.cpuinfo_architecture(module.cpuinfo()) != "x86":
        pytest.skip("needs an x86 /proc/cpuinfo to stand for the emulating CPU")
    monkeypatch.delenv("FLEETSCOPE_SYSFS_ROOT", raising=False)
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    native = module.cpu_facts(module.topology_facts())
    assert native["architecture"] == "aarch64"
    assert native["model_name"] == native["vendor"] == "unavailable"
    assert native["family"] is None and native["model"] is None and native["tsc_mhz"] is None
    assert native["vector_extensions"] == [] and native["hypervisor_flag"] is None
    assert native["emulation"]["cpu_architecture"] == "x86"
    assert native["emulation"]["cpu_model_name"] == module.cpuinfo()["model name"]
    assert native["logical_cpus"] >= 1  # the topology stands: it is the kernel's, shared with the emulator
    validator = _schema_validator("manifest.schema.json")
    manifest = json.loads(DEFAULT_RUN_MANIFEST.read_text())
    manifest["facts"]["cpu"] = native
    assert _schema_problem(validator, manifest) is None


def test_cpu_facts_natively_have_no_emulation_entry(module, monkeypatch):
    monkeypatch.delenv("FLEETSCOPE_SYSFS_ROOT", raising=False)
    assert "emulation" not in module.cpu_facts(module.topology_facts())


def test_virtualization_names_the_emulation(module, monkeypatch):
    if module.cpuinfo_architecture(module.cpuinfo()) != "x86":
        pytest.skip("needs an x86 /proc/cpuinfo to stand for the emulating CPU")
    monkeypatch.delenv("FLEETSCOPE_SYSFS_ROOT", raising=False)
    native = module.virtualization()
    assert "emulation" not in native
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert module.virtualization().startswith(
        "user-mode emulation: aarch64 userland on a kernel and CPU of the x86 family")


@pytest.mark.parametrize("facts_json, expected", [
    (json.dumps({"cpu": {"emulation": {"reason": "ran under qemu-user"}}}), "ran under qemu-user"),
    (json.dumps({"cpu": {"model_name": "AMD EPYC"}}), None),
    (json.dumps({"cpu": {"emulation": "yes"}}), None),          # a host's odd shapes read as no emulation
    (json.dumps({"cpu": {"emulation": {"reason": 7}}}), None),
    (json.dumps({"cpu": []}), None), (json.dumps([]), None), ("not json", None), (None, None)])
def test_the_page_reads_the_emulation_reason_from_the_facts(facts_json, expected):
    from fleetscope.report.summary import describe_cpu, emulation_reason
    assert emulation_reason(facts_json) == expected
    assert describe_cpu({"facts": facts_json})["emulation"] == expected


def test_a_long_emulation_reason_is_cut():
    from fleetscope.report.summary import emulation_reason
    shown = emulation_reason(json.dumps({"cpu": {"emulation": {"reason": "x" * 5000}}}))
    assert len(shown) == 400 and shown.endswith("…")


@pytest.mark.parametrize("answers, expected", [
    ({"--vm": (0, "kvm"), "--container": (0, "docker")}, "kvm (in a docker container)"),
    ({"--vm": (0, "kvm"), "--container": (1, "none")}, "kvm"),
    ({"--vm": (1, "none"), "--container": (0, "lxc")}, "lxc container, no hypervisor"),
    ({"--vm": (1, "none"), "--container": (1, "none")}, "none")])
def test_virtualization_names_the_hypervisor_and_the_container_around_it(module, monkeypatch, answers, expected):
    """systemd-detect-virt alone names the innermost layer: a container in a KVM guest read 'docker', and the
    page said nothing of the hypervisor under it."""
    monkeypatch.setattr(module, "emulation_facts", lambda machine, info: None)  # a native userland
    monkeypatch.setattr(module, "run", lambda argv: answers[argv[1]])
    assert module.virtualization() == expected
