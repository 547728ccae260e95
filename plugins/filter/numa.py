"""The NUMA latency matrix: one DRAM-sized chase per (CPU node, memory node) pair, the chase pinned to
the first CPU of its node and its memory bound to the other (--mem-node, set_mempolicy MPOL_BIND), as
Intel MLC's --latency_matrix does. A host with one node has no remote memory: the plan says so."""

from __future__ import annotations


def _first_cpu(cpulist):
    first = str(cpulist or "").split(",")[0].split("-")[0].strip()
    return int(first) if first.isdigit() else None


def numa_matrix_plan(numa, argv):
    """{points: [{label, argv}], notes: [...], skip: the reason there is nothing to measure, or None}
    from the facts' numa record ({nodes, cpus: {nodeN: cpulist}}): CPU nodes are the nodes with CPUs,
    memory nodes every node listed (a memory-only node, CXL or HBM, is a memory target too)."""
    nodes = dict(sorted(((numa or {}).get("cpus") or {}).items(), key=lambda item: int(item[0].removeprefix("node"))))
    if len(nodes) < 2:
        listed = ", ".join(f"{name}: CPUs {cpus}" for name, cpus in nodes.items()) or "no node directory in sysfs"
        return {"points": [], "notes": [], "skip": f"one NUMA node ({listed}): no remote memory to measure, so "
                                                   "there is no latency matrix"}
    cpu_nodes = {name: _first_cpu(cpus) for name, cpus in nodes.items() if _first_cpu(cpus) is not None}
    points = [{"label": f"CPU {cpu} ({cpu_node}) -> memory on {mem_node}",
               "argv": [*argv, "--cpu", cpu, "--mem-node", int(mem_node.removeprefix("node"))]}
              for cpu_node, cpu in cpu_nodes.items() for mem_node in nodes]
    notes = [f"{len(cpu_nodes)} CPU nodes x {len(nodes)} memory nodes: a DRAM-sized chase on the first CPU of each "
             "node, its memory bound to each node in turn (set_mempolicy MPOL_BIND: no fallback)"]
    return {"points": points, "notes": notes, "skip": None}


class FilterModule:
    def filters(self):
        return {"numa_matrix_plan": numa_matrix_plan}
