"""--mem-node: a kernel's memory bound to one NUMA node (set_mempolicy MPOL_BIND), recorded with the
measuring CPU's node: one cell of the NUMA latency matrix. This VM has one node, so node 0 is bound and a
node it lacks is refused before anything is measured."""

from pathlib import Path

from kernelrun import QUICK


def test_bound_chase_records_its_memory_and_cpu_node(records):
    (point,) = records("chase", "--cpu", "0", "--mem-node", "0", "--sizes", "1m", "--experiment", "numa_matrix",
                       *QUICK)
    assert point["experiment"] == "numa_matrix"
    assert (point["params"]["mem_node"], point["params"]["cpu_node"], point["params"]["cpu"]) == (0, 0, 0)


def test_unbound_points_carry_no_node_params(records):
    (point,) = records("chase", "--sizes", "1m", *QUICK)
    assert "mem_node" not in point["params"] and "cpu_node" not in point["params"]


def test_a_node_the_host_lacks_is_refused_before_measuring(run):
    missing = next(node for node in range(1024) if not Path(f"/sys/devices/system/node/node{node}").exists())
    result = run("chase", "--mem-node", str(missing), "--sizes", "1m", *QUICK)
    assert result.returncode == 2 and result.stdout == ""
    assert f"--mem-node {missing}: this host has no NUMA node {missing}" in result.stderr
    assert run("chase", "--mem-node", "-1", "--sizes", "1m").returncode == 2
