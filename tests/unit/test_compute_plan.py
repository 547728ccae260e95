"""The steps of core_clock and peak_flops on real topologies (tests/fixtures/sysfs): one CPU per physical core,
fastest core kind first, 1, 2, 4 ... and a step at each kind boundary; a host with one kind leaves the steps to
the kernels (1, 2, 4 ... and all cores)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from sysfs_facts import read

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plan():
    spec = importlib.util.spec_from_file_location("core_kinds_plan", ROOT / "plugins" / "filter" / "core_kinds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_raptor_lake_steps_through_its_p_cores_then_its_e_cores(plan):
    """Core i7-1370P: 6 P-cores (SMT) then 8 E-cores: 14 cores, one CPU each, the P-cores first."""
    order = plan.core_kind_cpu_order(read("intel-raptorlake-hybrid"))
    assert order["leaders"] == 14 and order["steps"][:6] == ["P-core"] * 6 and order["steps"][6:14] == ["E-core"] * 8
    assert plan.active_core_steps(order) == [1, 2, 4, 6, 8, 14]  # 6: every P-core; 14: all cores
    assert plan.active_core_steps(order, fastest_kind_only=True) == [1, 6, 14]


def test_big_little_arm_steps_at_its_cluster_boundary(plan):
    """NVIDIA GB10: 10 Cortex-X925 then 10 Cortex-A725."""
    order = plan.core_kind_cpu_order(read("arm-gb10-biglittle"))
    steps = plan.active_core_steps(order)
    assert steps == [1, 2, 4, 8, 10, 16, 20] and plan.active_core_steps(order, fastest_kind_only=True) == [1, 10, 20]


@pytest.mark.parametrize("machine", ["intel-xeon-e5-2node", "amd-opteron-8node"])
def test_a_host_with_one_kind_leaves_the_steps_to_the_kernels(plan, machine):
    order = plan.core_kind_cpu_order(read(machine))
    assert order == {} and plan.active_core_steps(order) == []
