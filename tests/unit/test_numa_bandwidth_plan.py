"""The NUMA bandwidth matrix's plan on the topologies of real machines (tests/fixtures/sysfs through
FLEETSCOPE_SYSFS_ROOT): which CPUs read, how much memory each thread gets, which node it is bound to,
and the one-node skip."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest
from sysfs_facts import read

ROOT = Path(__file__).resolve().parents[2]
GIB = 1 << 30
ARGV = ["fleetscope-kernels", "bandwidth", "--ops", "read"]


@pytest.fixture(scope="module")
def numa():
    spec = importlib.util.spec_from_file_location("numa_filters", ROOT / "plugins" / "filter" / "numa.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


machine_numa = functools.partial(read, reader="numa_facts")


def option(point: dict, name: str):
    return point["argv"][point["argv"].index(name) + 1]


def cells(points: list[dict]) -> list[tuple[str, int, int, int]]:
    """(cpus, threads, memory node, bytes per thread) of each point."""
    return [(option(p, "--cpus"), option(p, "--threads"), option(p, "--mem-node"), option(p, "--sizes"))
            for p in points]


def test_two_sockets_read_from_every_cpu_of_each_node_into_each_node(numa):
    plan = numa.numa_bandwidth_plan(machine_numa("intel-xeon-e5-2node"), ARGV, GIB, 64 * GIB)
    assert plan["skip"] is None
    # 64 GiB cap over 2 nodes: 32 GiB a node, 8 threads: the 1 GiB per thread fits
    assert cells(plan["points"]) == [("0,1,2,3,4,5,6,7", 8, 0, GIB), ("0,1,2,3,4,5,6,7", 8, 1, GIB),
                                     ("8,9,10,11,12,13,14,15", 8, 0, GIB), ("8,9,10,11,12,13,14,15", 8, 1, GIB)]
    assert all(point["argv"][:4] == ARGV for point in plan["points"])
    assert plan["points"][1]["label"] == "8 threads on node0 (CPUs 0-7) -> memory on node1"
    assert plan["notes"][0].startswith("2 CPU nodes x 2 memory nodes: read bandwidth from all CPUs of each node")


def test_a_point_stays_within_its_node_share_of_the_memory_cap(numa):
    """MPOL_BIND never falls back: 8 threads on a node whose share of a 4 GiB cap is 2 GiB get 256 MiB each,
    whatever the profile asks."""
    plan = numa.numa_bandwidth_plan(machine_numa("intel-xeon-e5-2node"), ARGV, GIB, 4 * GIB)
    assert {option(point, "--sizes") for point in plan["points"]} == {256 << 20}
    assert "256 MiB per thread" in plan["notes"][0]


def test_eight_nodes_with_a_set_thread_count(numa):
    plan = numa.numa_bandwidth_plan(machine_numa("amd-opteron-8node"), ARGV, 256 << 20, 64 * GIB, threads=1)
    assert len(plan["points"]) == 64
    assert sorted({(option(p, "--cpus"), option(p, "--threads")) for p in plan["points"]}) == sorted(
        (str(cpu), 1) for cpu in range(0, 16, 2))
    assert sorted({option(p, "--mem-node") for p in plan["points"]}) == list(range(8))
    assert "from the first 1 CPUs of each node" in plan["notes"][0]
    # more threads than a node has CPUs: the node's CPUs, no more
    plan = numa.numa_bandwidth_plan(machine_numa("amd-opteron-8node"), ARGV, 256 << 20, 64 * GIB, threads=4)
    assert {option(p, "--threads") for p in plan["points"]} == {2}


def test_a_bad_thread_count_is_refused(numa):
    with pytest.raises(ValueError, match="at least 1"):
        numa.numa_bandwidth_plan(machine_numa("intel-xeon-e5-2node"), ARGV, GIB, 64 * GIB, threads=0)


@pytest.mark.parametrize("machine", ["intel-raptorlake-hybrid", "arm-gb10-biglittle"])
def test_a_one_node_host_has_no_bandwidth_matrix_and_says_why(numa, machine):
    plan = numa.numa_bandwidth_plan(machine_numa(machine), ARGV, GIB, 64 * GIB)
    assert plan["points"] == [] and plan["notes"] == []
    assert plan["skip"] == numa.numa_matrix_plan(machine_numa(machine), ["chase"])["skip"]
    assert "no latency or bandwidth matrix" in plan["skip"]


def test_a_memory_only_node_is_read_into_but_reads_nothing(numa):
    plan = numa.numa_bandwidth_plan({"nodes": 2, "cpus": {"node0": "0-3", "node1": ""}}, ARGV, GIB, 64 * GIB)
    assert cells(plan["points"]) == [("0,1,2,3", 4, 0, GIB), ("0,1,2,3", 4, 1, GIB)]
