#!/usr/bin/python
"""Take the environment snapshot that every fleetscope result is read against.

Everything comes from sysfs/procfs and a few tools run with LC_ALL=C. A fact that cannot be
read on a host is recorded with the reason, never guessed.
"""

from __future__ import annotations

import glob
import os
import platform
import re
import shutil
import subprocess

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: fleetscope_facts
short_description: Environment snapshot for memory-hierarchy measurements
description:
  - CPU, caches per level from sysfs (size, ways, line size, sharing, instances), TLB where the CPU
    reports it, memory and DIMMs (dmidecode), NUMA, SMT, kernel and cmdline, THP, hugepages,
    governor, boost, perf_event_paranoid, virtualization, compiler, microcode and tool versions.
options: {}
"""

RETURN = r"""
fleetscope_facts:
  description: The snapshot, stored verbatim in the result bundle's manifest.
  type: dict
  returned: always
"""

ENV = dict(os.environ, LC_ALL="C", LANG="C")
UNAVAILABLE = "unavailable"


def read(path: str, default: str | None = None) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
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


def cpulist_count(text: str) -> int:
    count = 0
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


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


def cpu_facts() -> dict:
    info = cpuinfo()
    online = read("/sys/devices/system/cpu/online", "0") or "0"
    cores, packages, siblings_max = set(), set(), 1
    for topo in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/topology"):
        package = read(f"{topo}/physical_package_id", "0")
        cores.add((package, read(f"{topo}/core_id", "0")))
        packages.add(package)
        siblings = read(f"{topo}/thread_siblings_list")
        if siblings:
            siblings_max = max(siblings_max, cpulist_count(siblings))
    flags = info.get("flags", "").split()
    return {
        "model_name": info.get("model name", platform.processor() or UNAVAILABLE),
        "vendor": info.get("vendor_id", UNAVAILABLE),
        "family": int(info["cpu family"]) if info.get("cpu family", "").isdigit() else None,
        "model": int(info["model"]) if info.get("model", "").isdigit() else None,
        "stepping": int(info["stepping"]) if info.get("stepping", "").isdigit() else None,
        "microcode": info.get("microcode", UNAVAILABLE),
        "architecture": platform.machine(),
        "logical_cpus": cpulist_count(online),
        "online_cpus": online,
        "physical_cores": len(cores) or None,
        "sockets": len(packages) or None,
        "threads_per_core": siblings_max,
        "smt_active": read("/sys/devices/system/cpu/smt/active") == "1" or siblings_max > 1,
        "smt_control": read("/sys/devices/system/cpu/smt/control", UNAVAILABLE),
        "tsc_mhz": float(info["cpu MHz"]) if re.fullmatch(r"[\d.]+", info.get("cpu MHz", "")) else None,
        "vector_extensions": [f for f in ("sse2", "avx", "avx2", "avx512f", "asimd", "sve") if f in flags],
        "hypervisor_flag": "hypervisor" in flags,
        **arm_cpu_ids(read("/proc/cpuinfo", "") or ""),
    }


def cache_facts() -> list[dict]:
    """One entry per (level, type) as cpu0 sees it, with the number of instances system-wide."""
    levels: dict = {}
    for index in sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*")):
        level, kind = read(f"{index}/level"), read(f"{index}/type")
        size = read(f"{index}/size")
        if not (level and kind and size):
            continue
        entry = levels.setdefault((int(level), kind), {
            "level": int(level), "type": kind, "size_bytes": size_bytes(size),
            "ways": int(read(f"{index}/ways_of_associativity", "0") or 0) or None,
            "line_bytes": int(read(f"{index}/coherency_line_size", "0") or 0) or None,
            "sets": int(read(f"{index}/number_of_sets", "0") or 0) or None,
            "shared_cpu_list": read(f"{index}/shared_cpu_list"),
            "_sharing": set(),
        })
        entry["_sharing"].add(read(f"{index}/shared_cpu_list"))
    caches = []
    for key in sorted(levels):
        entry = levels[key]
        entry["instances"] = len(entry.pop("_sharing"))
        caches.append(entry)
    return caches


def tlb_facts(info: dict) -> dict:
    # x86 AMD reports "TLB size"; per-level entries need cpuid leaves the kernel does not export.
    return {"tlb_size": info.get("TLB size", UNAVAILABLE),
            "note": "per-level TLB entries are measured by the TLB experiment, not read here"}


def meminfo() -> dict:
    values = {}
    for line in (read("/proc/meminfo", "") or "").splitlines():
        key, _, rest = line.partition(":")
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
            key, _, value = line.strip().partition(":")
            if key in ("Size", "Type", "Speed", "Configured Memory Speed", "Manufacturer",
                       "Part Number", "Locator", "Bank Locator", "Rank", "Data Width"):
                current[key.lower().replace(" ", "_")] = value.strip()
    populated = [d for d in dimms if d.get("size") and "No Module" not in d["size"]]
    note = None if populated else "dmidecode lists no populated memory devices (common in VMs)"
    return {"dimms": populated, "dimms_note": note}


def numa_facts() -> dict:
    nodes = sorted(glob.glob("/sys/devices/system/node/node[0-9]*"))
    return {"nodes": len(nodes) or 1,
            "cpus": {os.path.basename(n): read(f"{n}/cpulist") for n in nodes}}


def virtualization() -> str:
    code, out = run(["systemd-detect-virt"])
    if code == 0 and out:
        return out
    if code == 1 and out == "none":
        return "none"
    return "hypervisor (type unknown)" if "hypervisor" in (read("/proc/cpuinfo", "") or "") else "none"


def first_line(argv: list[str]) -> str:
    code, out = run(argv)
    return out.splitlines()[0] if code == 0 and out else UNAVAILABLE


def os_release() -> dict:
    values = {}
    for line in (read("/etc/os-release", "") or "").splitlines():
        key, _, value = line.partition("=")
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
    return {"capability": "none", "reason": "no probe event counted", "events": events}


def collect() -> dict:
    mem = meminfo()
    thp = "/sys/kernel/mm/transparent_hugepage"
    selected = re.compile(r"\[([^\]]+)\]")

    def bracketed(path: str) -> str:
        text = read(path)
        match = selected.search(text or "")
        return match.group(1) if match else (text or UNAVAILABLE)

    governor = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    boost = read("/sys/devices/system/cpu/cpufreq/boost")
    no_turbo = read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    paranoid = read("/proc/sys/kernel/perf_event_paranoid")
    return {
        "hostname": platform.node(),
        "cpu": cpu_facts(),
        "caches": cache_facts(),
        "tlb": tlb_facts(cpuinfo()),
        "memory": {"mem_total_bytes": mem.get("MemTotal", 0),
                   "mem_available_bytes": mem.get("MemAvailable", 0),
                   "swap_total_bytes": mem.get("SwapTotal", 0),
                   **dimm_facts()},
        "numa": numa_facts(),
        "kernel": {"release": platform.release(), "version": platform.version(),
                   "cmdline": read("/proc/cmdline", UNAVAILABLE)},
        "os": os_release(),
        "virtualization": virtualization(),
        "thp": {"enabled": bracketed(f"{thp}/enabled"), "defrag": bracketed(f"{thp}/defrag")},
        "hugepages": {"nr_hugepages": int(read("/proc/sys/vm/nr_hugepages", "0") or 0),
                      "hugepagesize_bytes": mem.get("Hugepagesize", 0)},
        "governor": governor or UNAVAILABLE,
        "boost": boost if boost is not None else (
            f"intel_pstate no_turbo={no_turbo}" if no_turbo is not None else UNAVAILABLE),
        "perf_event_paranoid": int(paranoid) if paranoid and paranoid.lstrip("-").isdigit() else None,
        "perf": perf_capability(),
        "compiler": first_line(["cc", "--version"]),
        "tools": {"perf": first_line(["perf", "--version"]),
                  "fio": first_line(["fio", "--version"]),
                  "python": platform.python_version()},
        "steal_ticks": steal_ticks(),
    }


def main() -> None:
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    module.exit_json(changed=False, fleetscope_facts=collect())


if __name__ == "__main__":
    main()
