"""Filters for the experiments that may run as a team of threads from the inventory (the seed reports' settings:
stride_bandwidth and rw_mix with four threads, as the Raptor Lake report ran them)."""

from __future__ import annotations

LINE_BYTES = 64


def team_threads(requested, logical_cpus):
    """The threads a team runs: the inventory's count, at most one per CPU of the host (a 2-vCPU guest runs a
    seed report's four as two, and says so: team_notes)."""
    requested = int(requested or 1)
    return max(1, min(requested, int(logical_cpus or requested)))


def team_notes(requested, logical_cpus, variable):
    """Why a team ran with fewer threads than the inventory asked, for the experiment's notes ([] otherwise)."""
    ran = team_threads(requested, logical_cpus)
    if ran == int(requested or 1):
        return [] if ran == 1 else [f"{ran} threads ({variable}), one per CPU"]
    return [f"{variable} asked for {int(requested)} threads; this host has {int(logical_cpus)} CPUs, so {ran} ran "
            "(one per CPU)"]


def team_options(threads, cpu, dram_bytes, max_bytes):
    """The bandwidth kernel's placement options for `threads`: one thread pinned to `cpu` over the DRAM-sized
    buffer (the default, unchanged), or `--threads N` on the kernel's CPU order (one per physical core first),
    each thread's buffer DRAM-sized but all of them within the memory cap."""
    threads = int(threads or 1)
    if threads <= 1:
        return ["--cpu", str(cpu), "--sizes", str(int(dram_bytes))]
    per_thread = min(int(dram_bytes), int(max_bytes) // threads // LINE_BYTES * LINE_BYTES)
    return ["--threads", str(threads), "--sizes", str(per_thread)]


class FilterModule:
    def filters(self):
        return {"team_options": team_options, "team_threads": team_threads, "team_notes": team_notes}
