"""Planning Intel MLC invocations from a host's facts, and turning their results into the experiment
record: the raw-output entries, the error text and the notes."""

from __future__ import annotations

import math
import re
import shlex

from ansible.module_utils.common.text.formatters import bytes_to_human

# The order MLC runs in: idle latency first, on a quiet machine, then the modes that load it.
MODES = ("idle_latency", "latency_matrix", "loaded_latency", "peak_injection_bandwidth", "max_bandwidth",
         "bandwidth_matrix", "c2c_latency")
# Modes that take MLC's -t (seconds per measurement); --c2c_latency does not (MLC's usage text).
TIMED_MODES = {"idle_latency", "latency_matrix", "loaded_latency", "peak_injection_bandwidth", "max_bandwidth",
               "bandwidth_matrix"}
# Why a profile leaves a mode out, for the experiment's notes.
PROFILE_REASONS = {
    "max_bandwidth": "it tries several injection rates per read-write mix and takes minutes, so only the full "
                     "profile runs it",
    "latency_matrix": "on one NUMA node it repeats the DRAM idle latency; the standard and full profiles run it",
    "bandwidth_matrix": "on one NUMA node it repeats the all-reads peak bandwidth; the standard and full profiles "
                        "run it",
}
# Exit status of coreutils' timeout when it had to stop the command.
TIMEOUT_EXIT = 124


def _human(size: int) -> str:
    return bytes_to_human(int(size))


def _levels(caches):
    """[(label, sysfs size)] of the data and unified caches, closest first: L1d, L2, L3 ..."""
    sizes = {}
    for cache in caches or []:
        if cache.get("type") == "Instruction" or int(cache.get("size_bytes") or 0) <= 0:
            continue
        label = f"L{cache['level']}d" if cache.get("type") == "Data" else f"L{cache['level']}"
        sizes.setdefault(int(cache["level"]), (label, int(cache["size_bytes"])))
    return [sizes[level] for level in sorted(sizes)]


def level_buffers(caches):
    """The idle-latency buffer of each cache level, chosen as PerfSpect and our zero_queue kernel do:
    half of L1d; for each further level the geometric midpoint of its sysfs size and the size of
    the level below (in a VM the last level is served only in part, so a buffer near its sysfs size
    would read as DRAM). Whole KiB, MLC's -b unit. Returns ([{level, buffer_bytes, sysfs_size_bytes,
    buffer_rule}], [notes])."""
    levels = _levels(caches)
    plan, notes = [], []
    if not levels:
        return plan, ["idle latency per cache level left out: the facts list no cache sizes (sysfs); "
                      "DRAM idle latency still runs"]
    below = None
    for label, size in levels:
        if below is None:
            buffer = size // 2
            rule = f"half of {label} (sysfs {_human(size)})"
        elif size <= below[1]:
            notes.append(f"idle latency of {label} left out: sysfs says {_human(size)}, not larger than "
                         f"{below[0]} ({_human(below[1])})")
            continue
        else:
            buffer = math.isqrt(size * below[1])
            rule = f"geometric midpoint of {below[0]} and {label} (sysfs {_human(below[1])}, {_human(size)})"
        kib = buffer // 1024
        if kib < 1:
            notes.append(f"idle latency of {label} left out: half of {_human(size)} is under MLC's 1 KiB unit")
        else:
            plan.append({"level": label, "buffer_bytes": kib * 1024, "sysfs_size_bytes": size, "buffer_rule": rule})
        below = (label, size)
    return plan, notes


def _invocation(mode, args, level=None, buffer_bytes=None, sysfs_size_bytes=None, buffer_rule=None,
                duration_s=None):
    name = f"{mode}_{level}" if level else mode
    return {
        "label": f"{mode}{' ' + level if level else ''} ({' '.join(args[1:]) or 'defaults'})",
        "mode": mode,
        "args": args,
        "raw_path": f"raw/mlc/{name}.txt",
        "params": {"mode": mode, "level": level, "buffer_bytes": buffer_bytes, "sysfs_size_bytes": sysfs_size_bytes,
                   "buffer_rule": buffer_rule, "duration_s": duration_s},
    }


def mlc_plan(modes, caches, duration_s, cpu=0, dram_buffer_bytes=None, profile=None, profile_modes=None):
    """The MLC processes to run, in MLC order, and the notes on what was left out.

    Returns {"invocations": [{label, mode, args, raw_path, params}], "notes": [str]}. `args` follow the
    binary (MLC's own glued short options: -b16 is 16 KiB, -t2 two seconds, -c0 CPU 0); `params` are
    what the role knows about the run (flat scalars, for the manifest's raw entries)."""
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown:
        raise ValueError(f"mlc_modes: unknown MLC mode(s) {unknown}; known: {', '.join(MODES)}")
    duration_s = int(duration_s)
    if duration_s < 1:
        raise ValueError(f"mlc_duration_s must be at least 1 second, got {duration_s}")
    invocations, notes = [], []
    for mode in MODES:
        if mode not in modes:
            if profile_modes is not None and mode not in profile_modes and mode in PROFILE_REASONS:
                notes.append(f"{mode} left out by the {profile} profile: {PROFILE_REASONS[mode]} "
                             f"(add it to mlc_modes to run it)")
            else:
                notes.append(f"{mode} left out: not in mlc_modes")
            continue
        timed = [f"-t{duration_s}"] if mode in TIMED_MODES else []
        if mode == "idle_latency":
            buffers, level_notes = level_buffers(caches)
            notes.extend(level_notes)
            for level in buffers:
                kib = level["buffer_bytes"] // 1024
                invocations.append(_invocation(mode, [f"--{mode}", f"-b{kib}", *timed, f"-c{int(cpu)}"],
                                               duration_s=duration_s, **level))
            if dram_buffer_bytes:
                kib = int(dram_buffer_bytes) // 1024
                invocations.append(_invocation(mode, [f"--{mode}", f"-b{kib}", *timed, f"-c{int(cpu)}"], "DRAM",
                                               kib * 1024, None, "mlc_dram_buffer_bytes", duration_s))
            else:
                invocations.append(_invocation(mode, [f"--{mode}", *timed, f"-c{int(cpu)}"], "DRAM", None, None,
                                               "MLC's default buffer", duration_s))
        else:
            invocations.append(_invocation(mode, [f"--{mode}", *timed],
                                           duration_s=duration_s if mode in TIMED_MODES else None))
    return {"invocations": invocations, "notes": notes}


def mlc_argv(invocation, binary, extra_args=(), timeout_s=None):
    """The argv of one MLC process, inside coreutils' timeout when a limit is set."""
    argv = [str(binary), *invocation["args"], *[str(arg) for arg in extra_args or []]]
    if timeout_s:
        return ["timeout", "--kill-after=30", str(int(timeout_s)), *argv]
    return argv


def mlc_raw_entries(results, binary, extra_args=()):
    """The manifest's raw entries for the MLC processes that printed something: the path of the
    verbatim stdout in the bundle, the tool, and the params with the exact command line and the
    exit status (a process that failed half way keeps what it printed; the parser flags it cut short)."""
    entries = []
    for result in results:
        if result.get("skipped") or not result.get("stdout"):
            continue
        invocation = result["item"]
        command = [str(binary), *invocation["args"], *[str(arg) for arg in extra_args or []]]
        params = {**invocation["params"], "command_line": shlex.join(command), "exit_status": result.get("rc")}
        entries.append({"path": invocation["raw_path"], "tool": "mlc", "params": params})
    return entries


def _tail(text, lines):
    return " | ".join((text or "").strip().splitlines()[-int(lines):])


def mlc_failures(results, timeout_s=None, tail_lines=3):
    """One line per MLC process that failed: what ran, its exit status and the tail of what it said;
    None when every process exited 0."""
    failures = []
    for result in results:
        rc = result.get("rc")
        if result.get("skipped") or rc == 0:
            continue
        label = result["item"]["label"]
        if rc == TIMEOUT_EXIT and timeout_s:
            failures.append(f"{label}: stopped after mlc_timeout_s={int(timeout_s)} s")
            continue
        said = _tail(result.get("stderr"), tail_lines) or _tail(result.get("stdout"), tail_lines) \
            or result.get("msg") or "no output"
        failures.append(f"{label}: exit {rc}: {said}")
    return "\n".join(failures) or None


def mlc_outcome(results, timeout_s=None):
    """The experiment's status and error from its MLC processes: skipped when nothing was planned,
    failed when a process failed or none printed anything, else ok."""
    results = [result for result in results or [] if not result.get("skipped")]
    if not results:
        return {"status": "skipped", "error": None}
    error = mlc_failures(results, timeout_s)
    if error is None and not any(result.get("stdout") for result in results):
        error = "every MLC process exited 0 but none printed anything"
    return {"status": "failed" if error else "ok", "error": error}


_MEMINFO = re.compile(r"^(HugePages_Total|HugePages_Free|Hugepagesize):\s+(\d+)", re.MULTILINE)


def mlc_host_notes(msr_loaded_before, modprobe, meminfo_text, hugepages_wanted, vendor=None):
    """What the run must say about the host: whether the msr driver was there (without it MLC cannot
    switch the hardware prefetchers off and measures latency with random access instead), and the
    2 MiB pages reserved for it."""
    notes = []
    if msr_loaded_before:
        notes.append("msr: the msr driver was already loaded, so MLC could try to switch the hardware "
                     "prefetchers off for its latency measurements")
    elif modprobe and modprobe.get("rc") == 0:
        notes.append("msr: modprobe msr loaded the msr driver for this run (unloaded afterwards), so MLC could "
                     "try to switch the hardware prefetchers off for its latency measurements")
    else:
        modprobe = modprobe or {}
        reason = _tail(modprobe.get("stderr"), 2) or modprobe.get("msg") or "it failed"
        if not modprobe.get("stderr") and str(modprobe.get("msg", "")).startswith("Error executing command"):
            reason = "modprobe could not be started: is kmod installed?"
        notes.append(f"msr: modprobe msr did not work ({reason}): MLC cannot switch the hardware prefetchers "
                     "off, so it measures idle and loaded latency with random access instead of its "
                     "default walk with prefetchers off")
    if vendor and vendor != "GenuineIntel":
        notes.append(f"msr: MLC's prefetcher control is written for Intel CPUs and this one is {vendor}; "
                     "the access column of mlc_idle_latency says whether MLC fell back to random access")
    found = {key: int(value) for key, value in _MEMINFO.findall(meminfo_text or "")}
    total, free = found.get("HugePages_Total", 0), found.get("HugePages_Free", 0)
    size = _human(found.get("Hugepagesize", 2048) * 1024)
    wanted = int(hugepages_wanted)
    if total >= wanted:
        notes.append(f"hugepages: {total} x {size} reserved for the run ({free} free when MLC started; MLC asked "
                     f"for {wanted}), given back by the tuning role's restore")
    else:
        notes.append(f"hugepages: only {total} x {size} reserved ({free} free) where MLC asked for {wanted}: "
                     "tuning_nr_hugepages is capped at a quarter of MemAvailable, or was set lower")
    return notes


class FilterModule:
    def filters(self):
        return {"mlc_plan": mlc_plan, "mlc_argv": mlc_argv, "mlc_raw_entries": mlc_raw_entries,
                "mlc_failures": mlc_failures, "mlc_outcome": mlc_outcome, "mlc_host_notes": mlc_host_notes}
