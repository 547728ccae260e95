"""Synthetic sysfs trees of machines no fixture has (tests/fixtures/sysfs holds real ones, up to 20 CPUs):
big servers of 64 to 256 CPUs on 2 sockets with SMT and several CCDs (LLC domains) per socket, a NUMA node
per socket or per CCD, and hybrid parts whose kinds differ in their PMU type and private caches. Each tree
holds the files the facts module reads (plugins/modules/fleetscope_facts.py, through FLEETSCOPE_SYSFS_ROOT)
plus /proc/meminfo, so the plan's budget tests can read them as they read a real host."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KIB = 1024


@dataclass(frozen=True)
class Kind:
    """One core kind: how many cores, SMT threads per core, private L1d/L2 sizes (KiB), PMU name."""
    cores: int
    threads: int = 2
    l1d_kib: int = 32
    l2_kib: int = 1024
    pmu: str | None = None


@dataclass(frozen=True)
class Machine:
    """sockets x ccds_per_socket LLC domains, each kind's cores split evenly over them; nodes_per_socket
    NUMA nodes per socket, each holding whole CCDs (NPS1, NPS2, NPS4)."""
    name: str
    sockets: int
    ccds_per_socket: int
    kinds: tuple[Kind, ...]
    l3_kib: int = 32 * KIB
    nodes_per_socket: int = 1
    mem_available_bytes: int = 256 << 30
    model: str = "AMD EPYC 9654 96-Core Processor"

    @property
    def cpus(self) -> int:
        return self.sockets * sum(kind.cores * kind.threads for kind in self.kinds)


def _cpulist(cpus) -> str:
    cpus, runs = sorted(cpus), []
    for cpu in cpus:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def write(root: Path, machine: Machine) -> Path:
    """The tree of `machine` under root (CPU numbering as Linux gives it on x86: every core's first thread,
    socket by socket, then every core's second thread)."""
    cores = []  # (socket, ccd, core_id, kind)
    for socket in range(machine.sockets):
        core_id = 0
        for kind in machine.kinds:
            for index in range(kind.cores):
                cores.append((socket, index * machine.ccds_per_socket // kind.cores, core_id, kind))
                core_id += 1
    threads = max(kind.threads for kind in machine.kinds)
    cpu_of: dict[tuple[int, int], int] = {}
    number = 0
    for thread in range(threads):
        for position, (_, _, _, kind) in enumerate(cores):
            if thread < kind.threads:
                cpu_of[(position, thread)] = number
                number += 1
    siblings = {position: [cpu for (p, _), cpu in cpu_of.items() if p == position] for position in range(len(cores))}
    domains: dict[tuple[int, int], list[int]] = {}
    for position, (socket, ccd, _, _) in enumerate(cores):
        domains.setdefault((socket, ccd), []).extend(siblings[position])
    cpu_dir = root / "sys/devices/system/cpu"
    for (position, _), cpu in cpu_of.items():
        socket, ccd, core_id, kind = cores[position]
        own = _cpulist(siblings[position])
        files = {"topology/core_id": core_id, "topology/physical_package_id": socket, "topology/die_id": ccd,
                 "topology/thread_siblings_list": own, "topology/core_cpus_list": own}
        for index, (level, kind_name, size, shared) in enumerate([
                (1, "Data", kind.l1d_kib, own), (1, "Instruction", 32, own), (2, "Unified", kind.l2_kib, own),
                (3, "Unified", machine.l3_kib, _cpulist(domains[(socket, ccd)]))]):
            entry = f"cache/index{index}"
            files.update({f"{entry}/level": level, f"{entry}/type": kind_name, f"{entry}/size": f"{size}K",
                          f"{entry}/shared_cpu_list": shared, f"{entry}/coherency_line_size": 64,
                          f"{entry}/ways_of_associativity": 8})
        for name, value in files.items():
            path = cpu_dir / f"cpu{cpu}" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{value}\n")
    (cpu_dir / "online").write_text(f"0-{machine.cpus - 1}\n")
    for pmu in {kind.pmu for kind in machine.kinds if kind.pmu}:
        cpus = [cpu for (position, _), cpu in cpu_of.items() if cores[position][3].pmu == pmu]
        (root / f"sys/devices/{pmu}").mkdir(parents=True, exist_ok=True)
        (root / f"sys/devices/{pmu}/cpus").write_text(_cpulist(cpus) + "\n")
    node_of = {key: key[0] * machine.nodes_per_socket + key[1] * machine.nodes_per_socket // machine.ccds_per_socket
               for key in domains}
    for node in sorted(set(node_of.values())):
        folder = root / f"sys/devices/system/node/node{node}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "cpulist").write_text(_cpulist(cpu for key, cpus in domains.items() if node_of[key] == node
                                                 for cpu in cpus) + "\n")
        socket = node // machine.nodes_per_socket
        distances = [10 if other == node else 12 if other // machine.nodes_per_socket == socket else 32
                     for other in sorted(set(node_of.values()))]
        (folder / "distance").write_text(" ".join(map(str, distances)) + "\n")
    (root / "proc").mkdir(parents=True, exist_ok=True)
    (root / "proc/cpuinfo").write_text(f"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
                                       f"model name\t: {machine.model}\nflags\t\t: sse2 avx avx2\n\n")
    (root / "proc/meminfo").write_text(f"MemTotal: {machine.mem_available_bytes // KIB + 1048576} kB\n"
                                       f"MemAvailable: {machine.mem_available_bytes // KIB} kB\n")
    return root


# The big machines of issue 29's budget tests: 2 sockets, SMT, 8 CCDs (LLC domains) per socket, and a
# hybrid part.
BIG = {
    "epyc-64": Machine("epyc-64", 2, 8, (Kind(16),)),
    "epyc-128": Machine("epyc-128", 2, 8, (Kind(32),)),  # 16,256 ordered c2c pairs
    "epyc-256": Machine("epyc-256", 2, 8, (Kind(64),), nodes_per_socket=4, mem_available_bytes=1536 << 30,
                        model="AMD EPYC 9754 128-Core Processor"),  # 8 NUMA nodes (NPS4)
    # 8 P-cores x 2 threads (48 KiB L1d, 2 MiB L2) and 16 E-cores (32 KiB L1d, 4 MiB L2), one LLC
    "hybrid-32": Machine("hybrid-32", 1, 1, (Kind(8, 2, 48, 2048, "cpu_core"), Kind(16, 1, 32, 4096, "cpu_atom")),
                         l3_kib=36 * KIB, mem_available_bytes=96 << 30, model="13th Gen Intel(R) Core(TM) i9-13900K"),
}
