"""The c2c CPUs across LLC domains, planned on the topologies of real machines (tests/fixtures/sysfs through
FLEETSCOPE_SYSFS_ROOT): the Arm GB10 has two LLC domains (CPUs 0-9 and 10-19) on one NUMA node, as a
two-CCD Zen 3 socket has; the Raptor Lake hybrid one; the Opteron sixteen (its sysfs lists no shared
cache, so each CPU's own L2 is its last level)."""

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


def test_smt_siblings_do_not_count_as_a_pair_within_a_domain(plan):
    """Synthetic (no fixture has SMT and two LLC domains): a two-CCD Zen 3 socket, 2 x 4 cores with 2 threads
    each, CPUs n and n+16 siblings. Two CPUs of one core would time the core's own L1/L2, not the LLC domain."""
    records = [{"cpu": cpu, "llc": "0-3,16-19" if cpu % 16 < 4 else "4-7,20-23",
                "smt_siblings": f"{cpu % 16},{cpu % 16 + 16}"} for cpu in [*range(8), *range(16, 24)]]
    topology = {"cpus": records, "llc_domains": ["0-3,16-19", "4-7,20-23"]}
    result = plan(topology, "0,16")
    assert result["cpus"] == "0,16,1,4,5"
    assert domain_pairs_covered(topology, cpus(result["cpus"])) == every_domain_pair(topology)


@pytest.mark.parametrize("facts", [read("intel-raptorlake-hybrid"), {}])
def test_one_llc_domain_says_why_there_is_nothing_to_compare(plan, facts):
    result = plan(facts, "0-3")
    assert result["cpus"] == "0-3"
    assert "every CPU pair shares it, so there is no within- vs across-domain latency to show" in result["notes"][0]
    assert result["notes"][0].startswith("one LLC domain (CPUs 0-19)" if facts else
                                         "one LLC domain (the facts name no LLC domain)")
