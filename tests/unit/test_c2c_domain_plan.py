"""The c2c CPUs across LLC domains, planned on the topologies of real machines (tests/fixtures/sysfs through
FLEETSCOPE_SYSFS_ROOT): the Arm GB10 has two LLC domains (CPUs 0-9 and 10-19) on one NUMA node, as a
two-CCD Zen 3 socket has; the Raptor Lake hybrid one; the Opteron sixteen (its sysfs lists no shared
cache, so each CPU's own L2 is its last level); and a synthetic two-CCD Zen 3 socket with SMT."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest
from sysfs_facts import read

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plan():
    spec = importlib.util.spec_from_file_location("numa_filters_c2c", ROOT / "plugins" / "filter" / "numa.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.c2c_cpus_plan


def cpus(text: str) -> list[int]:
    out = []
    for item in text.split(","):
        first, _, last = item.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def domain_pairs_covered(topology: dict, chosen: list[int]) -> set[tuple[str, str]]:
    """The (domain, domain) pairs that the c2c kernel's ordered pairs of distinct CPUs among `chosen` cover."""
    domain_of = {record["cpu"]: record["llc"] for record in topology["cpus"]}
    return {(domain_of[a], domain_of[b]) for a, b in itertools.permutations(chosen, 2)}


def every_domain_pair(topology: dict) -> set[tuple[str, str]]:
    return set(itertools.product(topology["llc_domains"], repeat=2))


def test_two_llc_domains_on_one_node_all_cpus_cover_every_domain_pair(plan):
    topology = read("arm-gb10-biglittle")
    assert topology["llc_domains"] == ["0-9", "10-19"] and len(topology["numa"]["cpus"]) == 1
    result = plan(topology)
    assert result["cpus"] is None  # every online CPU
    assert result["notes"] == ["2 LLC domains (0-9; 10-19): every ordered CPU pair is measured, within and across "
                               "domains (view c2c_llc_domains)"]
    assert domain_pairs_covered(topology, [r["cpu"] for r in topology["cpus"]]) == every_domain_pair(topology)


def test_a_users_cpu_list_in_one_domain_gains_two_cpus_of_the_other(plan):
    topology = read("arm-gb10-biglittle")
    result = plan(topology, "0-3")
    assert result["cpus"] == "0,1,2,3,10,11"
    assert "CPUs 10-11 added" in result["notes"][0]
    assert domain_pairs_covered(topology, cpus(result["cpus"])) == every_domain_pair(topology)
    # a list that already holds two CPUs of each domain is kept as it is
    assert plan(topology, "0,5,12,19") == {"cpus": "0,5,12,19", "notes": [
        "2 LLC domains (0-9; 10-19): kernels_c2c_cpus 0,5,12,19 holds CPUs of two cores in every domain"]}


def test_sixteen_single_cpu_domains_take_one_cpu_each(plan):
    """The Opteron's sysfs gives each CPU its own last-level cache: a domain of one CPU has no pair within
    itself, and every pair across domains is covered."""
    topology = read("amd-opteron-8node")
    result = plan(topology, "0")
    assert cpus(result["cpus"]) == list(range(16))
    covered = domain_pairs_covered(topology, cpus(result["cpus"]))
    assert covered == {(a, b) for a, b in every_domain_pair(topology) if a != b}


def zen3_two_ccd_sysfs(root: Path) -> Path:
    """Synthetic sysfs of a Zen 3 socket with two CCDs (no fixture has one): 8 cores x 2 threads, CPU n and
    n + 8 siblings, cores 0-3 on CCD 0 and 4-7 on CCD 1; L1d, L1i and a 512 KiB L2 per core, a 32 MiB L3 per
    CCD; one NUMA node."""
    cpu_dir = root / "sys/devices/system/cpu"
    ccds = ["0-3,8-11", "4-7,12-15"]
    for cpu in range(16):
        core = cpu % 8
        siblings = f"{core},{core + 8}"
        files = {"topology/core_id": core, "topology/physical_package_id": 0, "topology/die_id": 0,
                 "topology/thread_siblings_list": siblings}
        for index, (level, kind, size, shared) in enumerate([(1, "Data", "32K", siblings),
                                                              (1, "Instruction", "32K", siblings),
                                                              (2, "Unified", "512K", siblings),
                                                              (3, "Unified", "32768K", ccds[core // 4])]):
            files.update({f"cache/index{index}/level": level, f"cache/index{index}/type": kind,
                          f"cache/index{index}/size": size, f"cache/index{index}/shared_cpu_list": shared,
                          f"cache/index{index}/coherency_line_size": 64})
        for name, value in files.items():
            path = cpu_dir / f"cpu{cpu}" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{value}\n")
    (cpu_dir / "online").write_text("0-15\n")
    node = root / "sys/devices/system/node/node0"
    node.mkdir(parents=True)
    (node / "cpulist").write_text("0-15\n")
    (node / "distance").write_text("10\n")
    return root


def test_a_two_ccd_socket_keeps_two_cores_of_each_ccd_and_smt_siblings_do_not_count(plan, tmp_path):
    """Two CPUs of one core would time the core's own L1/L2, not the CCD's L3: a list holding CPU 0 and its
    sibling 8 gains CPU 1 (another core of CCD 0) and CPUs 4 and 5 (CCD 1)."""
    topology = read(zen3_two_ccd_sysfs(tmp_path))
    assert topology["llc_domains"] == ["0-3,8-11", "4-7,12-15"] and list(topology["numa"]["cpus"]) == ["node0"]
    result = plan(topology, "0,8")
    assert result["cpus"] == "0,8,1,4,5"
    assert domain_pairs_covered(topology, cpus(result["cpus"])) == every_domain_pair(topology)
    assert plan(topology)["notes"][0].startswith("2 LLC domains (0-3,8-11; 4-7,12-15): every ordered CPU pair")


@pytest.mark.parametrize("facts", [read("intel-raptorlake-hybrid"), {}])
def test_one_llc_domain_says_why_there_is_nothing_to_compare(plan, facts):
    result = plan(facts, "0-3")
    assert result["cpus"] == "0-3"
    assert "every CPU pair shares it, so there is no within- vs across-domain latency to show" in result["notes"][0]
    assert result["notes"][0].startswith("one LLC domain (CPUs 0-19)" if facts else
                                         "one LLC domain (the facts name no LLC domain)")
