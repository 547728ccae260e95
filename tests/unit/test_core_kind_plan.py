"""Experiment planning per core kind, on the topologies of real machines (tests/fixtures/sysfs, read by
the facts module through FLEETSCOPE_SYSFS_ROOT): which CPU each pinned experiment runs on, how the
thread sweep, affinity's pinned threads and smt's placements order their CPUs and name each step's kind,
and that a host with one kind keeps its plan unchanged."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import pytest
from sysfs_facts import read

ROOT = Path(__file__).resolve().parents[2]
PER_KIND = ["latency_sweep", "zero_queue", "tlb", "write_cost", "bandwidth", "saxpy"]


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def plan():
    return load("core_kinds_plan", ROOT / "plugins" / "filter" / "core_kinds.py")


@pytest.fixture(scope="module")
def machine_topology():
    return read


def tlb_points(kernels_cpu: int = 0) -> list[dict]:
    argv = ["fleetscope-kernels", "tlb", "--cpu", kernels_cpu, "--samples", "11"]
    return [{"label": f"page_size={size}", "argv": [*argv, "--page-size", size]} for size in ("4k", "thp")]


def pinned(points: list[dict]) -> list[tuple[str, int]]:
    return [(point["label"], point["argv"][point["argv"].index("--cpu") + 1]) for point in points]


def test_raptor_lake_runs_each_pinned_point_on_a_p_core_and_an_e_core(plan, machine_topology):
    topology = machine_topology("intel-raptorlake-hybrid")
    points = plan.core_kind_points(tlb_points(), "tlb", topology, PER_KIND)
    assert pinned(points) == [("page_size=4k on P-core (CPU 4)", 4), ("page_size=4k on E-core (CPU 12)", 12),
                              ("page_size=thp on P-core (CPU 4)", 4), ("page_size=thp on E-core (CPU 12)", 12)]
    assert [point["core_kind"] for point in points] == ["P-core", "E-core"] * 2
    assert all(point["argv"][-2:] in (["--page-size", "4k"], ["--page-size", "thp"]) for point in points)
    (note,) = plan.core_kind_notes(topology, "tlb", PER_KIND, 0)
    assert "P-core on CPU 4 (of CPUs 0-11); E-core on CPU 12 (of CPUs 12-19)" in note
    assert "kernels_cpu=0 not used" in note


def test_gb10_runs_on_the_highest_capacity_x925_and_an_a725(plan, machine_topology):
    topology = machine_topology("arm-gb10-biglittle")
    points = plan.core_kind_points(tlb_points(), "saxpy", topology, PER_KIND)
    assert sorted({cpu for _, cpu in pinned(points)}) == [10, 19]
    assert {point["core_kind"] for point in points} == {"big", "LITTLE"}


@pytest.mark.parametrize("machine", ["intel-xeon-e5-2node", "amd-opteron-8node"])
def test_one_kind_hosts_keep_their_plan(plan, machine_topology, machine):
    topology = machine_topology(machine)
    points = tlb_points(kernels_cpu=3)
    assert plan.core_kind_points(points, "tlb", topology, PER_KIND) is points
    assert plan.core_kind_notes(topology, "tlb", PER_KIND, 3) == []
    assert plan.core_kind_cpu_order(topology) == {}
    assert plan.core_kind_order_note({}) == [] and plan.core_kind_order_note({}, cores_only=True) == []


def test_experiments_not_listed_or_switched_off_stay_on_kernels_cpu(plan, machine_topology):
    topology = machine_topology("intel-raptorlake-hybrid")
    points = tlb_points(kernels_cpu=2)
    assert plan.core_kind_points(points, "mlp", topology, PER_KIND) is points
    assert plan.core_kind_points(points, "tlb", topology, []) is points
    assert plan.core_kind_points(points, "tlb", {}, PER_KIND) is points  # facts from before topology


def test_a_per_kind_point_without_cpu_is_a_planning_error(plan, machine_topology):
    topology = machine_topology("intel-raptorlake-hybrid")
    with pytest.raises(ValueError, match="has no --cpu"):
        plan.core_kind_points([{"label": "x", "argv": ["fleetscope-kernels", "tlb"]}], "tlb", topology, PER_KIND)


def test_thread_sweep_takes_p_cores_then_e_cores_then_p_core_siblings(plan, machine_topology):
    order = plan.core_kind_cpu_order(machine_topology("intel-raptorlake-hybrid"))
    assert order["cpus"] == "0,2,4,6,8,10,12,13,14,15,16,17,18,19,1,3,5,7,9,11"
    assert order["steps"][:6] == ["P-core"] * 6 and order["steps"][6:14] == ["E-core"] * 8
    assert order["steps"][14:] == ["P-core SMT sibling"] * 6
    (note,) = plan.core_kind_order_note(order)
    assert note.endswith("threads 1-6: P-core; 7-14: E-core; 15-20: P-core SMT sibling")


def test_thread_sweep_on_big_little_takes_big_cores_first(plan, machine_topology):
    order = plan.core_kind_cpu_order(machine_topology("arm-gb10-biglittle"))
    assert order["cpus"] == "5,6,7,8,9,15,16,17,18,19,0,1,2,3,4,10,11,12,13,14"
    assert plan.core_kind_order_note(order)[0].endswith("threads 1-10: big; 11-20: LITTLE")


def test_affinity_pins_one_cpu_per_core_p_cores_first_and_names_each_threads_kind(plan, machine_topology):
    order = plan.core_kind_cpu_order(machine_topology("intel-raptorlake-hybrid"))
    assert order["cores"] == "0,2,4,6,8,10,12,13,14,15,16,17,18,19"  # affinity's --cpus: no SMT sibling
    (note,) = plan.core_kind_order_note(order, cores_only=True)
    assert note == ("pinned threads take one CPU per core by core kind (0,2,4,6,8,10,12,13,14,15,16,17,18,19): "
                    "thread 0-5: P-core; 6-13: E-core")


def test_affinity_on_big_little_takes_the_big_cores_first(plan, machine_topology):
    order = plan.core_kind_cpu_order(machine_topology("arm-gb10-biglittle"))
    assert order["cores"] == order["cpus"]  # no SMT: every CPU leads its core
    assert plan.core_kind_order_note(order, cores_only=True)[0].endswith("thread 0-9: big; 10-19: LITTLE")


@pytest.mark.parametrize("machine, cpu, label", [
    ("intel-raptorlake-hybrid", 1, "CPU 1 (P-core)"), ("intel-raptorlake-hybrid", 12, "CPU 12 (E-core)"),
    ("arm-gb10-biglittle", 5, "CPU 5 (big)"), ("arm-gb10-biglittle", 0, "CPU 0 (LITTLE)"),
    ("intel-xeon-e5-2node", 3, "CPU 3"), ("amd-opteron-8node", 15, "CPU 15"),
])
def test_smt_notes_name_each_cpus_kind_only_on_hosts_with_several(plan, machine_topology, machine, cpu, label):
    assert plan.cpu_kind(cpu, machine_topology(machine)) == label
    assert plan.cpu_kind(cpu, {}) == f"CPU {cpu}"  # facts from before topology


@pytest.mark.parametrize("machine", ["intel-raptorlake-hybrid", "arm-gb10-biglittle"])
def test_smt_takes_cpus_in_kind_order_fastest_kind_first(plan, machine_topology, machine):
    """smt --cpus gets the same order as the thread sweep: every CPU once, each kind's before the next
    kind's, the SMT siblings last; the kernel's plan then takes its CPU and another core's in that order."""
    topology = machine_topology(machine)
    order = [int(cpu) for cpu in plan.core_kind_cpu_order(topology)["cpus"].split(",")]
    assert sorted(order) == [cpu["cpu"] for cpu in topology["cpus"]]
    rank = {kind["kind"]: index for index, kind in enumerate(topology["core_kinds"])}
    kind_of = {cpu["cpu"]: cpu["kind"] for cpu in topology["cpus"]}
    leaders = order[:plan.core_kind_cpu_order(topology)["leaders"]]
    assert [rank[kind_of[cpu]] for cpu in leaders] == sorted(rank[kind_of[cpu]] for cpu in leaders)


def test_filters_are_registered(plan):
    assert set(plan.FilterModule().filters()) == {"core_kind_points", "core_kind_notes", "core_kind_cpu_order",
                                                  "core_kind_order_note", "cpu_kind", "active_core_steps"}


@pytest.fixture(scope="module")
def numa_plan():
    return load("numa_plan", ROOT / "plugins" / "filter" / "numa.py").numa_matrix_plan


@pytest.fixture(scope="module")
def machine_numa():
    return functools.partial(read, reader="numa_facts")


def cells(points: list[dict]) -> list[tuple[int, int]]:
    return [(point["argv"][point["argv"].index("--cpu") + 1], point["argv"][point["argv"].index("--mem-node") + 1])
            for point in points]


def test_numa_matrix_on_two_sockets_measures_every_cpu_node_memory_node_pair(numa_plan, machine_numa):
    plan = numa_plan(machine_numa("intel-xeon-e5-2node"), ["fleetscope-kernels", "chase", "--sizes", 1 << 30])
    assert plan["skip"] is None
    assert cells(plan["points"]) == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert plan["points"][1]["label"] == "CPU 0 (node0) -> memory on node1"
    assert plan["notes"][0].startswith("2 CPU nodes x 2 memory nodes")


def test_numa_matrix_on_eight_nodes_is_eight_by_eight(numa_plan, machine_numa):
    plan = numa_plan(machine_numa("amd-opteron-8node"), ["chase"])
    assert len(plan["points"]) == 64
    assert sorted({cpu for cpu, _ in cells(plan["points"])}) == [0, 2, 4, 6, 8, 10, 12, 14]


@pytest.mark.parametrize("machine", ["intel-raptorlake-hybrid", "arm-gb10-biglittle"])
def test_a_one_node_host_records_why_there_is_no_matrix(numa_plan, machine_numa, machine):
    plan = numa_plan(machine_numa(machine), ["chase"])
    assert plan["points"] == [] and plan["notes"] == []
    assert plan["skip"] == ("one NUMA node (node0: CPUs 0-19): no remote memory to measure, so there is no "
                            "latency or bandwidth matrix")


def test_a_memory_only_node_is_a_memory_target_not_a_cpu_node(numa_plan):
    """Synthetic: node1 holds memory and no CPUs (CXL or HBM memory), as sysfs lists it with an empty cpulist."""
    plan = numa_plan({"nodes": 2, "cpus": {"node0": "0-3", "node1": ""}}, ["chase"])
    assert cells(plan["points"]) == [(0, 0), (0, 1)]
    assert numa_plan({}, ["chase"])["skip"].startswith("one NUMA node (no node directory in sysfs)")
