"""--mem-node: a kernel's memory bound to one NUMA node (set_mempolicy MPOL_BIND), recorded with the
measuring CPU's node: one cell of the NUMA latency or bandwidth matrix. This VM has one node, so node 0
is bound and a node it lacks is refused before anything is measured; chase and bandwidth also ask the kernel
where their pages lie (move_pages), and the probe shows that question can answer 'elsewhere'."""

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import KERNELS_DIR
from kernelrun import QUICK

NODES = Path("/sys/devices/system/node")


def missing_node() -> int:
    return next(node for node in range(1024) if not (NODES / f"node{node}").exists())


def node_cpus(node: int) -> list[int]:
    """The node's CPUs, from its sysfs cpulist ("0-3,8")."""
    cpus = []
    for item in (NODES / f"node{node}" / "cpulist").read_text().strip().split(","):
        first, _, last = item.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def test_bound_chase_records_its_memory_and_cpu_node(records):
    (point,) = records("chase", "--cpu", "0", "--mem-node", "0", "--sizes", "1m", "--experiment", "numa_matrix",
                       *QUICK)
    assert point["experiment"] == "numa_matrix"
    assert (point["params"]["mem_node"], point["params"]["cpu_node"], point["params"]["cpu"]) == (0, 0, 0)
    # 1 MiB of 4 KiB pages: all 256 asked, all on node 0
    assert (point["context"]["mem_pages_sampled"], point["context"]["mem_pages_on_node"]) == (256, 256)


def test_unbound_points_carry_no_node_params(records):
    (point,) = records("chase", "--sizes", "1m", *QUICK)
    assert "mem_node" not in point["params"] and "cpu_node" not in point["params"]
    assert "mem_pages_sampled" not in point["context"]
    (point,) = records("bandwidth", "--ops", "read", "--sizes", "1m", *QUICK)
    assert "mem_node" not in point["params"] and "mem_pages_sampled" not in point["context"]


def test_a_node_the_host_lacks_is_refused_before_measuring(run):
    missing = missing_node()
    for kernel, *options in (("chase",), ("bandwidth", "--ops", "read")):
        result = run(kernel, *options, "--mem-node", str(missing), "--sizes", "1m", *QUICK)
        assert result.returncode == 2 and result.stdout == ""
        assert f"--mem-node {missing}: this host has no NUMA node {missing}" in result.stderr
    assert run("chase", "--mem-node", "-1", "--sizes", "1m").returncode == 2


def test_bound_bandwidth_threads_on_a_node_have_every_page_there(records):
    """Node 0's CPUs all read a buffer of their own bound to node 0: cpu_node is the node they share, and
    every sampled page of every thread is on node 0 (the kernel's own check, in the record)."""
    cpus = node_cpus(0)
    threads = len(cpus)
    (point,) = records("bandwidth", "--ops", "read", "--sizes", "4m", "--cpus", ",".join(map(str, cpus)),
                       "--threads", str(threads),
                       "--mem-node", "0", "--experiment", "numa_matrix", *QUICK)
    params, context = point["params"], point["context"]
    assert (params["mem_node"], params["cpu_node"], params["threads"]) == (0, 0, threads)
    assert params["cpu"] is None and params["cpus"] == cpus
    # each thread's 4 MiB: 1024 4 KiB pages, of which 256 are asked
    assert context["mem_pages_sampled"] == 256 * threads
    assert context["mem_pages_on_node"] == context["mem_pages_sampled"]


@pytest.fixture(scope="module")
def numa_probe(tmp_path_factory):
    binary = tmp_path_factory.mktemp("numa") / "numa_probe"
    subprocess.run([shutil.which("gcc") or "cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
                    f"-I{KERNELS_DIR / 'include'}", str(Path(__file__).with_name("numa_probe.c")),
                    str(KERNELS_DIR / "src" / "numa.c"), "-o", str(binary)], check=True, timeout=120)
    return lambda node: [int(word) for word in subprocess.run([str(binary), str(node)], capture_output=True,
                                                              text=True, check=True, timeout=60).stdout.split()]


def test_the_page_check_counts_pages_off_the_node(numa_probe):
    """On a one-node host every page is on node 0 and none on a node it lacks: the check the bandwidth kernel
    exits 3 on can fail."""
    assert numa_probe(0) == [256, 256]
    assert numa_probe(missing_node()) == [256, 0]
