"""The facts module reads the topology of every CPU, not cpu0's: run against real machines' sysfs
(tests/fixtures/sysfs, from hwloc's test suite) through FLEETSCOPE_SYSFS_ROOT."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import sysfs_facts

SYSFS = Path(__file__).resolve().parents[1] / "fixtures" / "sysfs"
KIB = 1024
DEFAULT_RUN_MANIFEST = next((SYSFS.parent / "default_run" / "results").glob("*/*/manifest.json"))


@pytest.fixture(scope="module")
def facts_module():
    return sysfs_facts.facts_module()


def topology(facts_module, monkeypatch, root: Path) -> dict:
    monkeypatch.setenv("FLEETSCOPE_SYSFS_ROOT", str(root))
    return facts_module.topology_facts()


def caches(kind: dict) -> dict:
    return {(cache["level"], cache["type"]): cache for cache in kind["caches"]}


def test_raptor_lake_p_and_e_cores_keep_their_own_caches(facts_module, monkeypatch):
    """i7-1370P: 6 P-cores with 2 threads (L1d 48 KiB, L2 1.25 MiB each), 8 E-cores in 2 clusters of
    4 (L1d 32 KiB, L2 2 MiB per cluster), one 24 MiB L3 for all (hwloc's own reading of this dump)."""
    facts = topology(facts_module, monkeypatch, SYSFS / "intel-raptorlake-hybrid")
    p_core, e_core = facts["core_kinds"]
    assert (p_core["kind"], p_core["cpus"], p_core["cores"], p_core["threads_per_core"]) == ("P-core", "0-11", 6, 2)
    assert (e_core["kind"], e_core["cpus"], e_core["cores"], e_core["threads_per_core"]) == ("E-core", "12-19", 8, 1)
    assert p_core["told_apart_by"] == e_core["told_apart_by"] == "private caches"  # no cpu_core PMU in this dump
    p, e = caches(p_core), caches(e_core)
    assert (p[1, "Data"]["size_bytes"], p[1, "Data"]["ways"], p[1, "Data"]["instances"]) == (48 * KIB, 12, 6)
    assert (p[2, "Unified"]["size_bytes"], p[2, "Unified"]["instances"]) == (1280 * KIB, 6)
    assert (e[1, "Data"]["size_bytes"], e[1, "Instruction"]["size_bytes"], e[1, "Data"]["instances"]) == (32 * KIB, 64 * KIB, 8)
    assert (e[2, "Unified"]["size_bytes"], e[2, "Unified"]["instances"], e[2, "Unified"]["shared_cpu_list"]) == (
        2048 * KIB, 2, "12-15")
    assert p[3, "Unified"]["size_bytes"] == e[3, "Unified"]["size_bytes"] == 24576 * KIB
    assert facts["llc_domains"] == ["0-19"]
    # Turbo Boost Max 3.0: cpus 4-5 and 8-9 reach 5.2 GHz, the other P-cores 5.0; the first favoured one represents
    assert p_core["representative_cpu"] == 4 and p_core["hardware_max_khz"] == 5_200_000
    assert e_core["representative_cpu"] == 12
    by_cpu = {cpu["cpu"]: cpu for cpu in facts["cpus"]}
    assert by_cpu[0]["smt_siblings"] == "0-1" and by_cpu[13]["smt_siblings"] == "13"
    assert by_cpu[0]["governor"] == "powersave" and by_cpu[12]["base_khz"] == 1_400_000
    assert facts["numa"]["nodes"] == 1


def test_pmu_core_type_names_the_kinds_where_the_kernel_exports_it(facts_module, monkeypatch, tmp_path):
    """Synthetic: the same dump with /sys/devices/cpu_core/cpus and cpu_atom/cpus added (the dump has
    neither); the PMU type then tells the kinds apart, and a CPU listed under cpu_atom is an E-core
    even where its caches alone would not say so."""
    root = tmp_path / "hybrid"
    shutil.copytree(SYSFS / "intel-raptorlake-hybrid", root)
    for pmu, cpus in (("cpu_core", "0-11"), ("cpu_atom", "12-19")):
        (root / "sys" / "devices" / pmu).mkdir(parents=True)
        (root / "sys" / "devices" / pmu / "cpus").write_text(cpus + "\n")
    kinds = topology(facts_module, monkeypatch, root)["core_kinds"]
    assert [(k["kind"], k["cpus"], k["pmu_type"], k["told_apart_by"]) for k in kinds] == [
        ("P-core", "0-11", "P-core", "PMU type"), ("E-core", "12-19", "E-core", "PMU type")]


def test_gb10_big_little_grouped_by_midr_not_capacity(facts_module, monkeypatch):
    """DGX Spark GB10: 10 Cortex-X925 (MIDR part 0xd85) and 10 Cortex-A725 (0xd87) in two clusters
    with 8 and 16 MiB L3; cpu_capacity varies inside each kind (997..1024 on the X925s), so it must
    not split them (hwloc's test says the same)."""
    facts = topology(facts_module, monkeypatch, SYSFS / "arm-gb10-biglittle")
    big, little = facts["core_kinds"]
    assert (big["kind"], big["cpus"], big["told_apart_by"], big["midr"]) == ("big", "5-9,15-19", "MIDR", "0x410fd850")
    assert (little["kind"], little["cpus"], little["midr"]) == ("LITTLE", "0-4,10-14", "0x410fd870")
    assert big["capacity"] == [997, 1017, 1024] and big["representative_cpu"] == 19
    assert caches(big)[2, "Unified"]["size_bytes"] == 2048 * KIB and caches(little)[2, "Unified"]["size_bytes"] == 512 * KIB
    assert caches(big)[3, "Unified"]["sizes_bytes"] == [8192 * KIB, 16384 * KIB]
    assert caches(big)[3, "Unified"]["instances"] == 2
    assert facts["llc_domains"] == ["0-9", "10-19"]


def test_two_socket_xeon_nodes_distances_llc_and_throttle_counters(facts_module, monkeypatch):
    facts = topology(facts_module, monkeypatch, SYSFS / "intel-xeon-e5-2node")
    (kind,) = facts["core_kinds"]
    assert (kind["kind"], kind["cpus"], kind["told_apart_by"], kind["representative_cpu"]) == ("core", "0-15", None, 0)
    assert caches(kind)[3, "Unified"]["instances"] == 2 and caches(kind)[3, "Unified"]["size_bytes"] == 20480 * KIB
    assert facts["llc_domains"] == ["0-7", "8-15"]
    assert [die["cpus"] for die in facts["dies"]] == ["0-7", "8-15"]
    assert facts["numa"] == {"nodes": 2, "cpus": {"node0": "0-7", "node1": "8-15"},
                             "distances": {"node0": [10, 21], "node1": [21, 10]},
                             "hmat": {"nodes": [], "reason": "no HMAT figures in sysfs (node*/access0/initiators): the "
                                      "firmware has no HMAT, or the kernel predates 5.2"}}
    cpu9 = next(cpu for cpu in facts["cpus"] if cpu["cpu"] == 9)
    assert cpu9["node"] == "node1" and cpu9["package"] == 1
    assert "core_throttle_count" in cpu9["thermal_throttle"]


def test_eight_node_opteron_and_homogeneous_summaries(facts_module, monkeypatch):
    facts = topology(facts_module, monkeypatch, SYSFS / "amd-opteron-8node")
    assert [kind["kind"] for kind in facts["core_kinds"]] == ["core"]
    assert facts["numa"]["nodes"] == 8
    assert facts["numa"]["distances"]["node3"] == [20, 20, 20, 10, 20, 20, 20, 20]
    assert len(facts["dies"]) == 8
    assert facts_module.summary({cpu["cpu"]: cpu["governor"] for cpu in facts["cpus"]}) == "unavailable"


def test_cpu_facts_count_cores_and_sockets_from_every_cpu(facts_module, monkeypatch):
    monkeypatch.setenv("FLEETSCOPE_SYSFS_ROOT", str(SYSFS / "intel-raptorlake-hybrid"))
    cpu = facts_module.cpu_facts(facts_module.topology_facts())
    assert (cpu["logical_cpus"], cpu["physical_cores"], cpu["sockets"], cpu["threads_per_core"]) == (20, 14, 1, 2)
    assert cpu["model_name"] == "13th Gen Intel(R) Core(TM) i7-1370P"


@pytest.mark.parametrize(("values", "expected"), [
    ({0: "performance", 1: "performance"}, "performance"),
    ({0: "powersave", 1: "performance", 2: "powersave"}, "powersave: 0,2; performance: 1"),
    ({0: None, 1: "performance"}, "performance: 1"),
    ({0: None}, "unavailable"),
])
def test_summary_of_per_cpu_values(facts_module, values, expected):
    assert facts_module.summary(values) == expected


def test_cpulist_round_trip(facts_module):
    assert facts_module.cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert facts_module.cpulist_text([11, 0, 1, 2, 3, 8, 10]) == "0-3,8,10-11"
    assert facts_module.cpulist("") == [] and facts_module.cpulist_text([]) == ""


@pytest.mark.parametrize("machine", sorted(path.name for path in SYSFS.iterdir() if path.is_dir()))
def test_manifest_schema_takes_every_fixture_topology(facts_module, monkeypatch, machine):
    from fleetscope.ingest.bundle import _schema_problem, _schema_validator
    validator = _schema_validator("manifest.schema.json")
    facts = topology(facts_module, monkeypatch, SYSFS / machine)
    facts.pop("numa")
    manifest = json.loads(DEFAULT_RUN_MANIFEST.read_text())
    manifest["facts"]["topology"] = facts
    assert _schema_problem(validator, manifest) is None
    facts["core_kinds"][0]["kind"] = "<script>"
    assert "core_kinds" in _schema_problem(validator, manifest)
    facts["core_kinds"][0]["kind"] = "core"
    facts["core_kinds"][0]["cpus"] = "0-3;rm"
    assert _schema_problem(validator, manifest) is not None
