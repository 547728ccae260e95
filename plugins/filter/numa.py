"""The NUMA matrices and the c2c CPUs across LLC domains. The NUMA matrices, as Intel MLC's --latency_matrix and --bandwidth_matrix measure them: for every
(CPU node, memory node) pair, a DRAM-sized chase pinned to the first CPU of the CPU node, and read
bandwidth from the CPU node's CPUs (all of them, or a set count), each thread on a buffer of its own;
every page bound to the memory node (--mem-node, set_mempolicy MPOL_BIND). A host with one node has
no remote memory: the plan says so. Core-to-core latency within vs across LLC domains (two CCDs of one
Zen 3 socket, a big.LITTLE part's clusters): the c2c CPUs hold two CPUs of every domain."""

from __future__ import annotations


# The highest CPU number a host's facts may name, as the manifest schema bounds topology.cpus[].cpu: a list
# reaching past it is no real host's, and expanding "0-300000000" would hold the controller for minutes.
MAX_CPU = 65535


def _cpus(cpulist) -> list[int]:
    """A sysfs CPU list ("0-3,8") as CPUs; an unreadable item, a range running backwards or past MAX_CPU, or
    a list naming more than MAX_CPU + 1 CPUs, ends the list (the facts hold it raw, from the host)."""
    cpus: list[int] = []
    for item in str(cpulist or "").split(","):
        first, _unused, last = item.strip().partition("-")
        if not first.isdigit() or (last and not last.isdigit()) or len(first) > 5 or len(last) > 5:
            break
        low, high = int(first), int(last or first)
        if low > high or high > MAX_CPU or len(cpus) + high - low >= MAX_CPU + 1:
            break
        cpus.extend(range(low, high + 1))
    return cpus


def _nodes(numa) -> dict[str, list[int]]:
    """node name -> its CPUs, in node order; a memory-only node (CXL, HBM) has none but is a memory target."""
    return {name: _cpus(cpus) for name, cpus in sorted(((numa or {}).get("cpus") or {}).items(),
                                                       key=lambda item: int(item[0].removeprefix("node")))}


def _skip(nodes: dict[str, list[int]]) -> str | None:
    if len(nodes) >= 2:
        return None
    listed = ", ".join(f"{name}: CPUs {_text(cpus)}" for name, cpus in nodes.items()) or "no node directory in sysfs"
    return (f"one NUMA node ({listed}): no remote memory to measure, so there is no latency or bandwidth "
            "matrix")


def _text(cpus: list[int]) -> str:
    """CPUs as a sysfs CPU list, ranges joined."""
    runs: list[list[int]] = []
    for cpu in cpus:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _node_number(name: str) -> int:
    return int(name.removeprefix("node"))


def numa_matrix_plan(numa, argv):
    """{points: [{label, argv}], notes: [...], skip: the reason there is nothing to measure, or None}
    for the latency matrix from the facts' numa record ({nodes, cpus: {nodeN: cpulist}}): CPU nodes are
    the nodes with CPUs, memory nodes every node listed."""
    nodes = _nodes(numa)
    skip = _skip(nodes)
    if skip:
        return {"points": [], "notes": [], "skip": skip}
    cpu_nodes = {name: cpus[0] for name, cpus in nodes.items() if cpus}
    points = [{"label": f"CPU {cpu} ({cpu_node}) -> memory on {mem_node}",
               "argv": [*argv, "--cpu", cpu, "--mem-node", _node_number(mem_node)]}
              for cpu_node, cpu in cpu_nodes.items() for mem_node in nodes]
    notes = [f"{len(cpu_nodes)} CPU nodes x {len(nodes)} memory nodes: a DRAM-sized chase on the first CPU of each "
             "node, its memory bound to each node in turn (set_mempolicy MPOL_BIND: no fallback)"]
    return {"points": points, "notes": notes, "skip": None}


def numa_bandwidth_plan(numa, argv, per_thread_bytes, max_bytes, threads=None):
    """{points, notes, skip} for the bandwidth matrix: per (CPU node, memory node), the bandwidth kernel
    (argv: its read-only options) on the CPU node's CPUs (the first `threads` of them; None: all), each
    thread on a buffer of per_thread_bytes bound to the memory node. All of a point's buffers together
    stay within max_bytes / nodes, as the node's share of the memory cap: the facts do not give each
    node's memory, and MPOL_BIND never falls back to another node."""
    nodes = _nodes(numa)
    skip = _skip(nodes)
    if skip:
        return {"points": [], "notes": [], "skip": skip}
    if threads is not None and int(threads) < 1:
        raise ValueError(f"threads per CPU node must be at least 1 (or null: all the node's CPUs), not {threads}")
    node_cap = int(max_bytes) // len(nodes)
    cpu_nodes = {name: cpus[:int(threads)] if threads else cpus for name, cpus in nodes.items() if cpus}
    points, sizes = [], set()
    for cpu_node, team in cpu_nodes.items():
        size = min(int(per_thread_bytes), node_cap // len(team)) // 64 * 64
        sizes.add(size)
        for mem_node in nodes:
            points.append({"label": f"{len(team)} threads on {cpu_node} (CPUs {_text(team)}) -> memory on {mem_node}",
                           "argv": [*argv, "--cpus", ",".join(map(str, team)), "--threads", len(team),
                                    "--sizes", size, "--mem-node", _node_number(mem_node)]})
    notes = [f"{len(cpu_nodes)} CPU nodes x {len(nodes)} memory nodes: read bandwidth from "
             f"{'the first ' + str(threads) if threads else 'all'} CPUs of each node, each thread on a buffer of "
             f"its own ({', '.join(f'{size / 1048576:.4g} MiB' for size in sorted(sizes))} per thread, within "
             "the node's share of the memory cap), bound to each node in turn (MPOL_BIND; the kernel checks "
             "where the pages lie with move_pages)"]
    return {"points": points, "notes": notes, "skip": None}


def c2c_cpus_plan(topology, requested=None):
    """{cpus: the c2c kernel's --cpus (None: every online CPU), notes} from the facts' topology ({cpus: [{cpu,
    llc, smt_siblings}], llc_domains}): with more than one LLC domain, every domain keeps two CPUs of different
    cores where it has them (the CPUs a user asked for, plus what a domain lacks), so every pair of domains,
    and every domain with itself, has at least one measured CPU pair; with one domain, why there is no
    within/across comparison."""
    topology = topology or {}
    domains = [_cpus(text) for text in topology.get("llc_domains") or []]
    if len(domains) < 2:
        where = f"CPUs {_text(domains[0])}" if domains else "the facts name no LLC domain"
        return {"cpus": requested or None,
                "notes": [f"one LLC domain ({where}): every CPU pair shares it, so there is no within- vs "
                          "across-domain latency to show"]}
    described = f"{len(domains)} LLC domains ({'; '.join(_text(domain) for domain in domains)})"
    if not requested:
        return {"cpus": None, "notes": [f"{described}: every ordered CPU pair is measured, within and across "
                                        "domains (view c2c_llc_domains)"]}
    siblings = {record["cpu"]: set(_cpus(record.get("smt_siblings"))) | {record["cpu"]}
                for record in topology.get("cpus") or []}
    chosen = _cpus(requested)
    added = []

    def other_core(cpu, cores):
        return not any(cpu in siblings.get(other, {other}) for other in cores)

    for domain in domains:
        cores = []  # one chosen CPU per core of the domain: two SMT siblings time their own core, not the domain
        for cpu in chosen:
            if cpu in domain and other_core(cpu, cores):
                cores.append(cpu)
        for cpu in domain:
            if len(cores) >= 2:
                break
            if cpu not in chosen and other_core(cpu, cores):
                cores.append(cpu)
                added.append(cpu)
    notes = [f"{described}: kernels_c2c_cpus {requested}"
             + (f" and CPUs {_text(sorted(added))} added, so every pair of domains and every domain with itself has "
                "a measured pair" if added else " holds CPUs of two cores in every domain")]
    return {"cpus": ",".join(map(str, chosen + added)), "notes": notes}


class FilterModule:
    def filters(self):
        return {"numa_matrix_plan": numa_matrix_plan, "numa_bandwidth_plan": numa_bandwidth_plan,
                "c2c_cpus_plan": c2c_cpus_plan}
