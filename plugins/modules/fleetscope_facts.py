#!/usr/bin/python
"""Take the environment snapshot that every fleetscope result is read against.

Everything comes from sysfs/procfs and a few tools run with LC_ALL=C. A fact that cannot be
read on a host is recorded with the reason, never guessed.
"""

from __future__ import annotations

DOCUMENTATION = r"""
module: fleetscope_facts
short_description: Environment snapshot for memory-hierarchy measurements
author:
  - fleetscope maintainers (@fleetscope)
description:
  - CPU, caches per level from sysfs (size, ways, line size, sharing, instances), TLB where the CPU
    reports it, memory and DIMMs (dmidecode; and the SMBIOS table read from sysfs with the DIMMs' theoretical
    peak), NUMA with the firmware's distances (SLIT) and HMAT figures, SMT, kernel and cmdline, THP, hugepages,
    governor, boost, perf_event_paranoid, virtualization, compiler, microcode and tool versions.
  - Sets it as the host's fact C(fleet_facts) (the run's record of the host, which the manifest keeps), so
    taking the snapshot is one task a host.
options:
  dram_peak_stated_gbps:
    description: The host's DRAM peak as the inventory states it (fleet_dram_peak_gbps), kept in the snapshot
      as C(memory.dram_peak_stated_gbps) beside what the host's firmware says.
    type: float
"""

EXAMPLES = r"""
- name: Take the environment snapshot
  fleetscope.fleet.fleetscope_facts:
    dram_peak_stated_gbps: 307.2
  environment:
    LC_ALL: C

- name: Show the caches sysfs reports
  ansible.builtin.debug:
    var: fleet_facts.caches
"""

RETURN = r"""
ansible_facts:
  description: The snapshot as the host's fact C(fleet_facts), stored verbatim in the result bundle's manifest.
  type: dict
  returned: always
"""

import glob
import os
import platform
import re
import shutil
import subprocess

from ansible.module_utils.basic import AnsibleModule


ENV = dict(os.environ, LC_ALL="C", LANG="C")
UNAVAILABLE = "unavailable"
# Where /sys and /proc are read from: "/" on a host; a directory holding a copy of another machine's
# sysfs and /proc/cpuinfo (tests/fixtures/sysfs/<machine>/) to take that machine's topology.
SYSFS_ROOT_VARIABLE = "FLEETSCOPE_SYSFS_ROOT"
CPU_DIR = "/sys/devices/system/cpu"


def host_path(path: str) -> str:
    return os.path.join(os.environ.get(SYSFS_ROOT_VARIABLE) or "/", path.lstrip("/"))


def host_glob(pattern: str) -> list[str]:
    """Host paths matching pattern, as host paths (the root stripped again)."""
    root = os.environ.get(SYSFS_ROOT_VARIABLE) or "/"
    return sorted("/" + os.path.relpath(found, root) for found in glob.glob(host_path(pattern)))


def read(path: str, default: str | None = None) -> str | None:
    try:
        with open(host_path(path), encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return default


def run(argv: list[str]) -> tuple[int, str]:
    if shutil.which(argv[0]) is None:
        return 127, f"{argv[0]}: not installed"
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return 1, str(err)
    if proc.returncode == 0:
        return 0, proc.stdout.strip()
    return proc.returncode, (proc.stderr or proc.stdout).strip()


def size_bytes(text: str) -> int:
    """sysfs cache sizes read like '32K', '1024K', '32768K'."""
    match = re.fullmatch(r"(\d+)([KMG]?)", text.strip())
    if not match:
        raise ValueError(f"unreadable size {text!r}")
    return int(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)]


def cpulist(text: str | None) -> list[int]:
    """'0-3,8,10-11' as [0, 1, 2, 3, 8, 10, 11]; [] for None or an empty list."""
    cpus = []
    for part in filter(None, (text or "").strip().split(",")):
        low, _unused, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


def cpulist_count(text: str) -> int:
    return len(cpulist(text))


def cpulist_text(cpus) -> str:
    """[0, 1, 2, 3, 8] as '0-3,8', the kernel's own notation."""
    ranges: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(f"{low}-{high}" if high > low else str(low) for low, high in ranges)


def cpuinfo() -> dict:
    fields: dict = {}
    for line in (read("/proc/cpuinfo", "") or "").splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if fields:
                break  # the first processor block is enough
            continue
        fields.setdefault(key.strip(), value.strip())
    return fields


# MIDR_EL1's implementer codes (Arm Architecture Reference Manual, MIDR_EL1; the names Linux's
# arch/arm64/include/asm/cputype.h and lscpu give them). A code not listed reads "implementer 0x..".
ARM_IMPLEMENTERS = {0x41: "ARM", 0x42: "Broadcom", 0x43: "Cavium", 0x46: "Fujitsu", 0x48: "HiSilicon",
                    0x4E: "NVIDIA", 0x50: "APM", 0x51: "Qualcomm", 0x53: "Samsung", 0x56: "Marvell",
                    0x61: "Apple", 0x69: "Intel", 0x6D: "Microsoft", 0x70: "Phytium", 0xC0: "Ampere"}


def arm_cpu_ids(cpuinfo_text: str) -> dict:
    """On Arm, the MIDR implementer of the first CPU and every distinct part number in CPU order, as
    /proc/cpuinfo writes them ("0x41", ["0xd0b", "0xd05"] on a big.LITTLE SoC): together they name the
    cores. Empty on x86, whose /proc/cpuinfo has no such lines."""
    implementer, parts = None, []
    for line in cpuinfo_text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip().lower()
        if key == "CPU implementer" and implementer is None:
            implementer = value
        elif key == "CPU part" and value not in parts:
            parts.append(value)
    return {"implementer": implementer, "parts": parts} if implementer and parts else {}


def arm_vendor(implementer: str) -> str:
    try:
        code = int(implementer, 16)
    except ValueError:
        return UNAVAILABLE
    return ARM_IMPLEMENTERS.get(code, f"implementer {implementer}")


def arm_model_name(ids: dict) -> str:
    """Arm's /proc/cpuinfo has no model name. On a live host lscpu names the parts from their MIDR
    ('Neoverse-N1', 'Cortex-A55 + Cortex-A76'); read from a copy of another machine's sysfs, or without
    lscpu, the numbers themselves (the warehouse's host_identity names the parts from them either way)."""
    if not os.environ.get(SYSFS_ROOT_VARIABLE):
        code, out = run(["lscpu"])
        names = [line.split(":", 1)[1].strip() for line in out.splitlines()
                 if code == 0 and line.strip().startswith("Model name:")]
        if names and "-" not in names:
            return " + ".join(dict.fromkeys(names))
    return f"{arm_vendor(ids['implementer'])} part {' + '.join(ids['parts'])}"


# /proc/cpuinfo is the kernel's, and each architecture's kernel writes it with its own keys: which of them
# the first block has names the architecture of the CPU the kernel runs on.
# A family covers the machines one kernel runs natively (32-bit Arm userland on an arm64 kernel is not emulated).
CPUINFO_ARCHITECTURES = (("vendor_id", "x86"), ("CPU implementer", "arm"), ("isa", "riscv"), ("cpu", "powerpc"))
MACHINE_FAMILIES = (("x86", r"x86_64|i[3-6]86|amd64"), ("arm", r"aarch64.*|arm.*"), ("riscv", r"riscv.*"),
                    ("powerpc", r"ppc.*|powerpc.*"))


def cpuinfo_architecture(info: dict) -> str | None:
    return next((family for key, family in CPUINFO_ARCHITECTURES if key in info), None)


def machine_family(machine: str) -> str | None:
    return next((family for family, pattern in MACHINE_FAMILIES if re.fullmatch(pattern, machine)), None)


def emulation_facts(machine: str, info: dict) -> dict | None:
    """A user-mode emulator (qemu-user through binfmt_misc) runs this userland on a kernel, and a CPU, of
    another architecture: uname (which the emulator answers) says `machine`, /proc/cpuinfo (which the kernel
    writes) describes the CPU that runs the emulator. Then /proc/cpuinfo, sysfs's caches and every timing
    are that CPU's and the emulator's, not those of a `machine` CPU: None where the two agree."""
    kernel_arch = cpuinfo_architecture(info)
    if os.environ.get(SYSFS_ROOT_VARIABLE) or kernel_arch is None or machine_family(machine) in (None, kernel_arch):
        return None
    return {"userland": machine, "cpu_architecture": kernel_arch,
            "cpu_model_name": info.get("model name") or UNAVAILABLE,
            "reason": f"this {machine} userland runs under a user-mode emulator (such as qemu-user through "
                      f"binfmt_misc) on a kernel and CPU of another architecture ({kernel_arch}, by /proc/cpuinfo): "
                      f"/proc/cpuinfo and sysfs describe the CPU that runs the emulator, and every timing is "
                      f"the emulator's"}


def cpu_facts(topology: dict) -> dict:
    info = cpuinfo()
    emulated = emulation_facts(platform.machine(), info)
    if emulated:
        # Nothing /proc/cpuinfo says is about the CPU this userland's code is written for: no model, vendor,
        # family or extensions for it (the CPU running the emulator is named under `emulation`).
        return {**cpu_topology_facts(topology), "architecture": platform.machine(), "model_name": UNAVAILABLE,
                "vendor": UNAVAILABLE, "family": None, "model": None, "stepping": None, "microcode": UNAVAILABLE,
                "tsc_mhz": None, "vector_extensions": [], "hypervisor_flag": None, "emulation": emulated}
    return {**cpu_topology_facts(topology), **cpu_identity_facts(info)}


def cpu_topology_facts(topology: dict) -> dict:
    online = read(f"{CPU_DIR}/online", "0") or "0"
    cpus = topology["cpus"]
    siblings_max = max((len(cpulist(cpu["smt_siblings"])) for cpu in cpus), default=1)
    return {
        "logical_cpus": cpulist_count(online),
        "online_cpus": online,
        "physical_cores": len({(cpu["package"], cpu["die"], cpu["core"]) for cpu in cpus}) or None,
        "sockets": len({cpu["package"] for cpu in cpus}) or None,
        "threads_per_core": siblings_max,
        "smt_active": read(f"{CPU_DIR}/smt/active") == "1" or siblings_max > 1,
        "smt_control": read(f"{CPU_DIR}/smt/control", UNAVAILABLE),
    }


def cpu_identity_facts(info: dict) -> dict:
    # x86 lists its extensions as "flags", Arm as "Features"; only x86 has a "hypervisor" flag
    flags = (info.get("flags") or info.get("Features") or "").split()
    arm = arm_cpu_ids(read("/proc/cpuinfo", "") or "")
    return {
        "model_name": info.get("model name") or (arm_model_name(arm) if arm else None)
        or platform.processor() or UNAVAILABLE,
        "vendor": info.get("vendor_id") or (arm_vendor(arm["implementer"]) if arm else UNAVAILABLE),
        "family": int(info["cpu family"]) if info.get("cpu family", "").isdigit() else None,
        "model": int(info["model"]) if info.get("model", "").isdigit() else None,
        "stepping": int(info["stepping"]) if info.get("stepping", "").isdigit() else None,
        "microcode": info.get("microcode", UNAVAILABLE),
        "architecture": platform.machine() if not os.environ.get(SYSFS_ROOT_VARIABLE) else (
            "aarch64" if "CPU implementer" in (read("/proc/cpuinfo", "") or "") else "x86_64"),
        "tsc_mhz": float(info["cpu MHz"]) if re.fullmatch(r"[\d.]+", info.get("cpu MHz", "")) else None,
        "vector_extensions": [f for f in ("sse2", "avx", "avx2", "avx512f", "asimd", "sve", "sve2") if f in flags],
        "hypervisor_flag": "hypervisor" in flags if "flags" in info else None,
        **arm,
    }


def online_cpus() -> list[int]:
    """The CPUs to read: those listed online (every cpuN directory where the list is missing)."""
    listed = cpulist(read(f"{CPU_DIR}/online"))
    present = sorted(int(path.rsplit("cpu", 1)[1]) for path in host_glob(f"{CPU_DIR}/cpu[0-9]*"))
    return [cpu for cpu in present if cpu in listed] if listed else present


def number(path: str) -> int | None:
    text = read(path)
    return int(text) if text and text.lstrip("-").isdigit() else None


def cpu_caches(cpu: int) -> list[dict]:
    """Every cache one CPU reaches, from its own cache/index* entries."""
    caches = []
    for index in host_glob(f"{CPU_DIR}/cpu{cpu}/cache/index[0-9]*"):
        level, kind, size = read(f"{index}/level"), read(f"{index}/type"), read(f"{index}/size")
        if not (level and kind and size):
            continue
        caches.append({
            "level": int(level), "type": kind, "size_bytes": size_bytes(size),
            "ways": number(f"{index}/ways_of_associativity") or None,
            "line_bytes": number(f"{index}/coherency_line_size") or None,
            "sets": number(f"{index}/number_of_sets") or None,
            "shared_cpu_list": read(f"{index}/shared_cpu_list") or str(cpu),
            "id": number(f"{index}/id"),
        })
    return sorted(caches, key=lambda cache: (cache["level"], cache["type"]))


def pmu_core_types() -> dict[int, str]:
    """Intel hybrid parts name each CPU's core type through the PMU that counts it:
    /sys/devices/cpu_core/cpus (P-cores) and /sys/devices/cpu_atom/cpus (E-cores)."""
    types = {}
    for pmu, name in (("cpu_core", "P-core"), ("cpu_atom", "E-core")):
        for cpu in cpulist(read(f"/sys/devices/{pmu}/cpus")):
            types[cpu] = name
    return types


def cpu_record(cpu: int, pmu_types: dict[int, str]) -> dict:
    """One CPU's place in the machine, its clocks, and what tells its core kind apart."""
    topo, freq = f"{CPU_DIR}/cpu{cpu}/topology", f"{CPU_DIR}/cpu{cpu}/cpufreq"
    caches = cpu_caches(cpu)
    siblings = read(f"{topo}/thread_siblings_list") or read(f"{topo}/core_cpus_list") or str(cpu)
    # A core's own caches are those shared with no CPU outside its SMT siblings; they (with the MIDR
    # or the PMU type) tell the kinds apart. Clocks and cpu_capacity do not: they differ within one
    # kind (Turbo Boost Max favoured cores; the GB10's X925 cores read capacity 997 to 1024).
    own = [cache for cache in caches if set(cpulist(cache["shared_cpu_list"])) <= set(cpulist(siblings))]
    shared = [cache for cache in caches if cache not in own]
    midr = read(f"{CPU_DIR}/cpu{cpu}/regs/identification/midr_el1")
    return {
        "cpu": cpu,
        "package": number(f"{topo}/physical_package_id") or 0,
        "die": number(f"{topo}/die_id") or 0,
        "cluster": number(f"{topo}/cluster_id"),
        "core": number(f"{topo}/core_id") or 0,
        "smt_siblings": siblings,
        "pmu_type": pmu_types.get(cpu),
        # MIDR without its revision nibble: implementer, variant, architecture and part name the core
        "midr": f"0x{int(midr, 16) & ~0xF:08x}" if midr else None,
        "capacity": number(f"{CPU_DIR}/cpu{cpu}/cpu_capacity"),
        "governor": read(f"{freq}/scaling_governor"),
        "driver": read(f"{freq}/scaling_driver"),
        "min_khz": number(f"{freq}/scaling_min_freq"),
        "max_khz": number(f"{freq}/scaling_max_freq"),
        "hardware_min_khz": number(f"{freq}/cpuinfo_min_freq"),
        "hardware_max_khz": number(f"{freq}/cpuinfo_max_freq"),
        "base_khz": number(f"{freq}/base_frequency"),
        "thermal_throttle": [os.path.basename(path) for path in
                             host_glob(f"{CPU_DIR}/cpu{cpu}/thermal_throttle/*_count")],
        "llc": (shared or caches or [{"shared_cpu_list": None}])[-1]["shared_cpu_list"],
        "_own": own,
        "_caches": caches,
    }


def kind_key(record: dict) -> tuple:
    return (record["pmu_type"], record["midr"],
            tuple((c["level"], c["type"], c["size_bytes"], c["ways"]) for c in record["_own"]))


def speed(record: dict) -> tuple:
    """How fast a CPU is meant to run: capacity (Arm), the highest clock, then L2 and L1d size."""
    sizes = {(c["level"], c["type"]): c["size_bytes"] for c in record["_caches"]}
    return (record["capacity"] or 0, record["hardware_max_khz"] or 0,
            sizes.get((2, "Unified"), 0), sizes.get((1, "Data"), 0))


def kind_names(count: int, arm: bool) -> list[str]:
    if count == 1:
        return ["core"]
    fast, slow = ("big", "LITTLE") if arm else ("P-core", "E-core")
    return [fast] + [f"mid-{rank}" for rank in range(1, count - 1)] + [slow]


def kind_caches(records: list[dict]) -> list[dict]:
    """The caches of one core kind as its first CPU sees them, each with its instances among the
    kind's CPUs, and every size where they differ (LLC domains: the GB10's 8 and 16 MiB)."""
    caches = []
    for cache in records[0]["_caches"]:
        same = [other for record in records for other in record["_caches"]
                if (other["level"], other["type"]) == (cache["level"], cache["type"])]
        entry = {key: cache[key] for key in ("level", "type", "size_bytes", "ways", "line_bytes", "sets",
                                             "shared_cpu_list")}
        entry["instances"] = len({other["shared_cpu_list"] for other in same})
        sizes = sorted({other["size_bytes"] for other in same})
        if len(sizes) > 1:
            entry["sizes_bytes"] = sizes
        caches.append(entry)
    return caches


def topology_facts() -> dict:
    """Every online CPU's place (package, die, core, SMT siblings, LLC domain, node, clocks) and the
    distinct core kinds, fastest first, each with its CPUs, caches and one representative CPU."""
    pmu_types = pmu_core_types()
    records = [cpu_record(cpu, pmu_types) for cpu in online_cpus()]
    nodes = numa_facts()
    node_of = {cpu: name for name, text in nodes["cpus"].items() for cpu in cpulist(text)}
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        groups.setdefault(kind_key(record), []).append(record)
    ranked = sorted(groups.values(), key=lambda group: (tuple(-v for v in max(map(speed, group))), group[0]["cpu"]))
    arm = any(record["midr"] for record in records) or "CPU implementer" in (read("/proc/cpuinfo", "") or "")
    kinds = []
    for name, group in zip(kind_names(len(ranked), arm), ranked):
        # the fastest CPU of the kind (Turbo Boost Max favoured core, highest capacity), lowest first
        representative = max(group, key=lambda r: (speed(r), -r["cpu"]))
        kinds.append({
            "kind": name,
            "cpus": cpulist_text(r["cpu"] for r in group),
            "cpu_count": len(group),
            "cores": len({(r["package"], r["die"], r["core"]) for r in group}),
            "threads_per_core": max(len(cpulist(r["smt_siblings"])) for r in group),
            "representative_cpu": representative["cpu"],
            "told_apart_by": None if len(ranked) == 1 else (
                "PMU type" if group[0]["pmu_type"] else "MIDR" if group[0]["midr"] else "private caches"),
            "pmu_type": group[0]["pmu_type"],
            "midr": group[0]["midr"],
            "capacity": sorted({r["capacity"] for r in group if r["capacity"] is not None}) or None,
            "hardware_max_khz": max((r["hardware_max_khz"] or 0 for r in group), default=0) or None,
            "base_khz": max((r["base_khz"] or 0 for r in group), default=0) or None,
            "caches": kind_caches(group),
        })
        for record in group:
            record["kind"] = name
    dies = sorted({(r["package"], r["die"]) for r in records})
    return {
        "cpus": [{**{key: value for key, value in record.items() if not key.startswith("_")},
                  "node": node_of.get(record["cpu"])} for record in records],
        "core_kinds": kinds,
        "llc_domains": sorted({r["llc"] for r in records if r["llc"]}, key=lambda text: cpulist(text)[0]),
        "dies": [{"package": package, "die": die,
                  "cpus": cpulist_text(r["cpu"] for r in records if (r["package"], r["die"]) == (package, die))}
                 for package, die in dies],
        "numa": nodes,
    }


def summary(values: dict) -> str:
    """One value when every CPU agrees ('performance'), else which CPUs have which
    ('powersave: 0-11; performance: 12-19'); `unavailable` where no CPU has one."""
    by_value: dict = {}
    for cpu, value in values.items():
        if value is not None:
            by_value.setdefault(value, []).append(cpu)
    if not by_value:
        return UNAVAILABLE
    if len(by_value) == 1 and len(next(iter(by_value.values()))) == len(values):
        return str(next(iter(by_value)))
    return "; ".join(f"{value}: {cpulist_text(cpus)}" for value, cpus in by_value.items())


def cache_facts(topology: dict) -> dict:
    """The fastest core kind's caches (every CPU's on a homogeneous host; each kind's are in
    topology.core_kinds), or none with the reason: sysfs is the only place Linux lists cache sizes, and
    Arm's cache-size registers (CCSIDR_EL1) cannot be read from user space, so nothing is guessed."""
    caches = topology["core_kinds"][0]["caches"] if topology["core_kinds"] else []
    note = None if caches else (
        f"sysfs lists no caches under {CPU_DIR}/cpuN/cache: the firmware gave the kernel no cache description "
        "(no ACPI PPTT cache entries or device-tree cache nodes, common in VMs and on some Arm servers); "
        "cache sizes are not recorded, and the hierarchy comes from the latency sweep alone")
    return {"caches": caches, "caches_note": note}


def tlb_facts(info: dict) -> dict:
    # x86 AMD reports "TLB size"; per-level entries need cpuid leaves the kernel does not export.
    return {"tlb_size": info.get("TLB size", UNAVAILABLE),
            "note": "per-level TLB entries are measured by the TLB experiment, not read here"}


def meminfo() -> dict:
    values = {}
    for line in (read("/proc/meminfo", "") or "").splitlines():
        key, _unused, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[key] = int(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
    return values


def dimm_facts() -> dict:
    code, out = run(["dmidecode", "-t", "17"])
    if code != 0:
        return {"dimms": [], "dimms_note": f"dmidecode failed: {out.splitlines()[-1] if out else code}"}
    dimms, current = [], None
    for line in out.splitlines():
        if line.strip() == "Memory Device":
            current = {}
            dimms.append(current)
        elif current is not None and ":" in line:
            key, _unused, value = line.strip().partition(":")
            if key in ("Size", "Type", "Speed", "Configured Memory Speed", "Manufacturer",
                       "Part Number", "Locator", "Bank Locator", "Rank", "Data Width"):
                current[key.lower().replace(" ", "_")] = value.strip()
    populated = [d for d in dimms if d.get("size") and "No Module" not in d["size"]]
    note = None if populated else "dmidecode lists no populated memory devices (common in VMs)"
    return {"dimms": populated, "dimms_note": note}


# ---- what the firmware claims: SMBIOS memory devices and ACPI HMAT -----------------------------------

DMI_TABLE = "/sys/firmware/dmi/tables/DMI"          # the whole SMBIOS table (root only)
DMI_ENTRIES = "/sys/firmware/dmi/entries/17-*/raw"  # each type 17 structure alone (root only)
DMI_MAX_BYTES = 1 << 20      # a real table is a few KiB to a few tens of KiB
DMI_MAX_DEVICES = 1024       # memory device slots
MEMORY_TYPES = {0x0F: "SDRAM", 0x12: "DDR", 0x13: "DDR2", 0x18: "DDR3", 0x1A: "DDR4", 0x1B: "LPDDR", 0x1C: "LPDDR2",
                0x1D: "LPDDR3", 0x1E: "LPDDR4", 0x20: "HBM", 0x21: "HBM2", 0x22: "DDR5", 0x23: "LPDDR5", 0x24: "HBM3"}


def read_bytes(path: str, limit: int) -> bytes | None:
    try:
        with open(host_path(path), "rb") as handle:
            return handle.read(limit + 1)
    except OSError:
        return None


def smbios_structures(table: bytes) -> list[tuple[int, bytes, list[str]]]:
    """(type, formatted area, strings) of each structure of an SMBIOS table (DSP0134: a header of type, length
    and handle, the formatted area, then strings each ending in NUL and the set in a second NUL), up to the end
    of table (type 127) or a structure that runs past the data. One pass over the bytes."""
    found, offset = [], 0
    while offset + 4 <= len(table) and len(found) < 4 * DMI_MAX_DEVICES:
        kind, length = table[offset], table[offset + 1]
        if length < 4 or offset + length > len(table):
            break
        end = table.find(b"\0\0", offset + length)
        if end < 0:
            break
        strings = table[offset + length:end].split(b"\0") if end > offset + length else []
        found.append((kind, table[offset:offset + length], [item.decode("ascii", "replace").strip() for item in strings]))
        if kind == 127:
            break
        offset = end + 2
    return found


def memory_device(area: bytes, strings: list[str]) -> dict:
    """One SMBIOS type 17 structure's fields (DSP0134 3.x offsets; a field past the structure's length, as in an
    older SMBIOS, is None): size, type, locators, rated and configured speed (MT/s), widths."""
    def word(offset: int) -> int | None:
        return int.from_bytes(area[offset:offset + 2], "little") if len(area) >= offset + 2 else None

    def dword(offset: int) -> int | None:
        return int.from_bytes(area[offset:offset + 4], "little") if len(area) >= offset + 4 else None

    def text(offset: int) -> str | None:
        index = area[offset] if len(area) > offset else 0
        return strings[index - 1] if 0 < index <= len(strings) else None

    def speed(offset: int, extended: int) -> int | None:
        value = word(offset)
        if value == 0xFFFF:
            value = dword(extended)
        return value or None

    size = word(0x0C)
    if size == 0x7FFF:
        size_bytes = ((dword(0x1C) or 0) & 0x7FFFFFFF) << 20
    elif size in (None, 0xFFFF):
        size_bytes = None  # unknown
    else:
        size_bytes = (size & 0x7FFF) << (10 if size & 0x8000 else 20)
    width = word(0x0A)
    return {"locator": text(0x10), "bank": text(0x11), "size_bytes": size_bytes,
            "type": MEMORY_TYPES.get(area[0x12]) if len(area) > 0x12 else None,
            "speed_mts": speed(0x15, 0x54), "configured_speed_mts": speed(0x20, 0x58),
            "data_width_bits": width if width not in (None, 0, 0xFFFF) else None}


_CHANNEL = re.compile(r"CHANNEL[ _-]?([A-Z0-9]+)|(?:^|[^A-Z0-9])CH[ _-]?([A-Z0-9])(?:[^A-Z0-9]|$)")
_SOCKET = re.compile(r"(?:^|[^A-Z0-9])(P|CPU|NODE|PROC|SOCKET)[ _-]?(\d+)")


def channel_of(device: dict) -> str | None:
    """The memory channel a DIMM sits on, where its bank or device locator names one ('P0 CHANNEL A', 'DIMM 0';
    'Node0_Channel1_Dimm0'; 'CPU1_CH2_DIMM0'), with its socket where named; None where they name none ('DIMM_A1':
    whether A is a channel or a socket is the board maker's convention, not SMBIOS')."""
    text = f"{device.get('bank') or ''} {device.get('locator') or ''}".upper()
    channel = _CHANNEL.search(text)
    if channel is None:
        return None
    socket = _SOCKET.search(text)
    where = f"{socket.group(1)}{socket.group(2)} " if socket else ""
    return f"{where}channel {channel.group(1) or channel.group(2)}"


def dram_peak(populated: list[dict]) -> dict:
    """The DIMMs' theoretical peak: per channel its slowest DIMM's configured (else rated) speed x its data width,
    summed. Channels from the locators where every DIMM names one; else each DIMM counts as a channel of its own,
    an upper bound (DIMMs sharing a channel share its bus)."""
    if not populated:
        return {"channels": None, "channels_from": None, "peak_gbps": None,
                "peak_note": "no populated memory device in the SMBIOS table (common in VMs)"}
    named = [channel_of(device) for device in populated]
    if all(named):
        keys, how = named, "the locators name each DIMM's channel"
    else:
        keys, how = [f"DIMM {index}" for index in range(len(populated))], (
            "one per populated DIMM, an upper bound: the locators name no channel")
    channels: dict[str, list[dict]] = {}
    for key, device in zip(keys, populated):
        channels.setdefault(key, []).append(device)
    total, notes = 0.0, []
    for key, devices in channels.items():
        speeds = [device["configured_speed_mts"] or device["speed_mts"] for device in devices]
        if not all(speeds):
            return {"channels": len(channels), "channels_from": how, "peak_gbps": None,
                    "peak_note": f"{devices[0]['locator'] or key} states no speed"}
        width = max(device["data_width_bits"] or 64 for device in devices)
        if any(device["data_width_bits"] is None for device in devices):
            notes.append(f"{key}: no data width stated, 64 bits taken")
        total += min(speeds) * 1e6 * width / 8 / 1e9
    return {"channels": len(channels), "channels_from": how, "peak_gbps": round(total, 3),
            "peak_note": "; ".join(notes) or None}


def smbios_memory() -> dict:
    """The memory devices (type 17) of the SMBIOS table, read from sysfs without dmidecode: the whole table where
    readable, else each type 17 entry; the populated ones, their channels and the DIMMs' theoretical peak."""
    table = read_bytes(DMI_TABLE, DMI_MAX_BYTES)
    source = DMI_TABLE
    if table is None:
        entries = sorted(host_glob(DMI_ENTRIES), key=lambda path: int(re.search(r"/17-(\d+)/", path).group(1)))
        entries = entries[:DMI_MAX_DEVICES]  # in the kernel's order of the structures, as the table holds them
        table = b"".join(read_bytes(path, 4096) or b"" for path in entries)
        source = "/sys/firmware/dmi/entries" if entries else None
    if not table or source is None:
        return {"source": None, "reason": f"{DMI_TABLE} and {DMI_ENTRIES} cannot be read (no SMBIOS table: a VM "
                "or a board without one; or not root)"}
    if len(table) > DMI_MAX_BYTES:
        return {"source": source, "reason": f"the SMBIOS table is over {DMI_MAX_BYTES} bytes: not read"}
    devices = [memory_device(area, strings) for kind, area, strings in smbios_structures(table)
               if kind == 17][:DMI_MAX_DEVICES]
    populated = [device for device in devices if device["size_bytes"]]
    return {"source": source, "reason": None, "slots": len(devices), "populated": len(populated),
            "dimms": populated, **dram_peak(populated)}


def hmat_facts() -> dict:
    """What the ACPI HMAT claims per memory node for its nearest initiators (the kernel's access0 class): read and
    write latency (ns) and bandwidth (MB/s), and which nodes those initiators are. A 0 is no figure (firmware
    that fills the table with zeros)."""
    nodes = []
    for path in host_glob("/sys/devices/system/node/node[0-9]*/access0/initiators"):
        node = int(path.split("/node/node", 1)[1].split("/", 1)[0])
        try:
            names = os.listdir(host_path(path))
        except OSError:
            continue
        figures = {name: value if (value := number(f"{path}/{name}")) and value > 0 else None
                   for name in ("read_latency", "write_latency", "read_bandwidth", "write_bandwidth")}
        nodes.append({"node": node, "initiators": sorted(int(name[4:]) for name in names
                                                         if re.fullmatch(r"node\d+", name)),
                      "read_latency_ns": figures["read_latency"], "write_latency_ns": figures["write_latency"],
                      "read_bandwidth_mb_s": figures["read_bandwidth"],
                      "write_bandwidth_mb_s": figures["write_bandwidth"]})
    nodes.sort(key=lambda item: item["node"])
    if not nodes:
        return {"nodes": [], "reason": "no HMAT figures in sysfs (node*/access0/initiators): the firmware has no "
                "HMAT, or the kernel predates 5.2"}
    if not any(value for item in nodes for key, value in item.items() if key.endswith(("_ns", "_mb_s"))):
        return {"nodes": nodes, "reason": "the firmware's HMAT states every latency and bandwidth as 0: no figures"}
    return {"nodes": nodes, "reason": None}


def numa_facts() -> dict:
    """Nodes, each node's CPUs and its row of the firmware's distance table (SLIT: 10 = local)."""
    nodes = host_glob("/sys/devices/system/node/node[0-9]*")
    nodes.sort(key=lambda path: int(path.rsplit("node", 1)[1]))
    distances = {os.path.basename(n): [int(v) for v in (read(f"{n}/distance") or "").split()] for n in nodes}
    return {"nodes": len(nodes) or 1,
            "cpus": {os.path.basename(n): read(f"{n}/cpulist") for n in nodes},
            "distances": distances if any(distances.values()) else {},
            "hmat": hmat_facts()}


def virtualization() -> str:
    emulated = emulation_facts(platform.machine(), cpuinfo())
    if emulated:
        # systemd-detect-virt and the hypervisor flag would describe the machine running the emulator
        return (f"user-mode emulation: {emulated['userland']} userland on a kernel and CPU of the "
                f"{emulated['cpu_architecture']} family (qemu-user or alike); timings are the emulator's")
    # A container inside a VM is both: systemd-detect-virt alone names only the container (docker), while the
    # hypervisor is what shapes the timings (steal, how guest memory is backed), so each is asked for apart.
    found = {}
    for kind in ("vm", "container"):
        code, out = run(["systemd-detect-virt", f"--{kind}"])
        if code in (0, 1) and out:
            found[kind] = out.splitlines()[0]
    if not found:
        return "hypervisor (type unknown)" if "hypervisor" in (read("/proc/cpuinfo", "") or "") else "none"
    vm, container = found.get("vm", "none"), found.get("container", "none")
    if container == "none":
        return vm
    return f"{vm} (in a {container} container)" if vm != "none" else f"{container} container, no hypervisor"


def first_line(argv: list[str]) -> str:
    code, out = run(argv)
    return out.splitlines()[0] if code == 0 and out else UNAVAILABLE


def os_release() -> dict:
    values = {}
    for line in (read("/etc/os-release", "") or "").splitlines():
        key, _unused, value = line.partition("=")
        values[key.lower()] = value.strip('"')
    return {k: values[k] for k in ("pretty_name", "id", "version_id") if k in values}


def steal_ticks() -> int | None:
    first = (read("/proc/stat", "") or "").splitlines()[:1]
    parts = first[0].split() if first else []
    return int(parts[8]) if len(parts) > 8 else None


# One hardware and one software event: which of them perf can count decides what the perf wrapper
# of the kernels can measure on this host.
PERF_PROBE_EVENTS = ("cycles", "instructions", "task-clock")


def perf_capability() -> dict:
    """`hardware` (PMU counters count), `software` (only kernel software events, e.g. in a VM without
    a virtual PMU) or `none` (no perf, or perf refused), with the reason and each probe event's state."""
    if shutil.which("perf") is None:
        return {"capability": "none", "reason": "perf is not installed", "events": {}}
    argv = ["perf", "stat", "-x,", "-e", ",".join(PERF_PROBE_EVENTS), "--", "true"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return {"capability": "none", "reason": f"perf stat could not run: {err}", "events": {}}
    events = {}
    for line in proc.stderr.splitlines():
        fields = line.split(",")
        if len(fields) >= 3 and fields[2].split(":")[0] in PERF_PROBE_EVENTS:
            value = fields[0]
            events[fields[2].split(":")[0]] = value.strip("<>") if value.startswith("<") else "counted"
    if proc.returncode != 0 or not events:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        return {"capability": "none", "reason": f"perf stat failed (exit {proc.returncode}): {tail}",
                "events": events}
    if events.get("cycles") == "counted" and events.get("instructions") == "counted":
        return {"capability": "hardware", "reason": "cycles and instructions count", "events": events}
    if events.get("task-clock") == "counted":
        return {"capability": "software",
                "reason": f"hardware events are {events.get('cycles', 'missing')} (no PMU counters here, "
                          "e.g. a VM without a virtual PMU): only software events count",
                "events": events}
    emulated = emulation_facts(platform.machine(), cpuinfo())
    return {"capability": "none", "events": events,
            "reason": "no probe event counted, not even the software event task-clock" + (
                f" ({', '.join(f'{name} {state}' for name, state in events.items())})" if events else "") + (
                ": under user-mode emulation perf_event_open is the emulator's to provide, and it does not"
                if emulated else "")}


def cpuidle_facts() -> dict:
    """The idle states (C-states) cpu0 may enter, by name, and the driver offering them."""
    states = [read(f"{path}/name") for path in host_glob(f"{CPU_DIR}/cpu0/cpuidle/state[0-9]*")]
    return {"driver": read(f"{CPU_DIR}/cpuidle/current_driver", UNAVAILABLE),
            "states": [state for state in states if state]}


def firmware_facts() -> dict:
    """BIOS and board from DMI (sysfs, readable without root); `unavailable` where absent."""
    return {field: read(f"/sys/class/dmi/id/{field}", UNAVAILABLE)
            for field in ("sys_vendor", "product_name", "board_vendor", "board_name", "bios_vendor",
                          "bios_version", "bios_date")}


def collect() -> dict:
    mem = meminfo()
    thp = "/sys/kernel/mm/transparent_hugepage"
    selected = re.compile(r"\[([^\]]+)\]")

    def bracketed(path: str) -> str:
        text = read(path)
        match = selected.search(text or "")
        return match.group(1) if match else (text or UNAVAILABLE)

    topology = topology_facts()
    numa = topology.pop("numa")
    per_cpu = {cpu["cpu"]: cpu for cpu in topology["cpus"]}
    boost = read("/sys/devices/system/cpu/cpufreq/boost")
    no_turbo = read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    paranoid = read("/proc/sys/kernel/perf_event_paranoid")
    return {
        "hostname": platform.node(),
        "cpu": cpu_facts(topology),
        **cache_facts(topology),
        "topology": topology,
        "tlb": tlb_facts(cpuinfo()),
        "memory": {"mem_total_bytes": mem.get("MemTotal", 0),
                   "mem_available_bytes": mem.get("MemAvailable", 0),
                   "swap_total_bytes": mem.get("SwapTotal", 0),
                   **dimm_facts(), "smbios": smbios_memory()},
        "numa": numa,
        "kernel": {"release": platform.release(), "version": platform.version(),
                   "cmdline": read("/proc/cmdline", UNAVAILABLE)},
        "os": os_release(),
        "virtualization": virtualization(),
        "thp": {"enabled": bracketed(f"{thp}/enabled"), "defrag": bracketed(f"{thp}/defrag")},
        "hugepages": {"nr_hugepages": int(read("/proc/sys/vm/nr_hugepages", "0") or 0),
                      "hugepagesize_bytes": mem.get("Hugepagesize", 0)},
        "governor": summary({cpu: record["governor"] for cpu, record in per_cpu.items()}),
        "frequency_khz": {limit: summary({cpu: record[limit] for cpu, record in per_cpu.items()})
                          for limit in ("min_khz", "max_khz", "hardware_min_khz", "hardware_max_khz", "base_khz")},
        "cpuidle": cpuidle_facts(),
        "firmware": firmware_facts(),
        "boost": boost if boost is not None else (
            f"intel_pstate no_turbo={no_turbo}" if no_turbo is not None else UNAVAILABLE),
        "perf_event_paranoid": int(paranoid) if paranoid and paranoid.lstrip("-").isdigit() else None,
        "perf": perf_capability(),
        "compiler": first_line(["cc", "--version"]),
        "tools": {"perf": first_line(["perf", "--version"]),
                  "fio": first_line(["fio", "--version"]),
                  "python": platform.python_version(),
                  "libc": " ".join(platform.libc_ver()).strip() or UNAVAILABLE},
        "steal_ticks": steal_ticks(),
    }


def main() -> None:
    module = AnsibleModule(argument_spec={"dram_peak_stated_gbps": {"type": "float"}}, supports_check_mode=True)
    module.exit_json(changed=False, ansible_facts={"fleet_facts": with_stated(collect(), module.params)})


def with_stated(snapshot: dict, params: dict) -> dict:
    """The snapshot with what the inventory states of the host beside what it read (`params`, the module's)."""
    if params.get("dram_peak_stated_gbps") is not None:
        snapshot["memory"]["dram_peak_stated_gbps"] = float(params["dram_peak_stated_gbps"])
    return snapshot


if __name__ == "__main__":
    main()
