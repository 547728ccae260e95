"""Working-set sizes for capacity sweeps: geometric, whole cache lines, bounded by memory."""

from __future__ import annotations

import math

from ansible.module_utils.common.text.formatters import bytes_to_human

LINE_BYTES = 64


def sweep_sizes(min_bytes, max_bytes, per_octave, line_bytes=LINE_BYTES):
    """Sizes from min_bytes to max_bytes inclusive, per_octave points per doubling.

    Each size is rounded down to whole cache lines; duplicates (tiny sizes at dense sweeps) are
    dropped. max_bytes is always the last point so the DRAM plateau is reached.
    """
    min_bytes, max_bytes, per_octave = int(min_bytes), int(max_bytes), int(per_octave)
    if min_bytes < 2 * line_bytes or max_bytes < min_bytes or per_octave < 1:
        raise ValueError(f"bad sweep: min={min_bytes} max={max_bytes} per_octave={per_octave}")
    steps = math.floor(math.log2(max_bytes / min_bytes) * per_octave + 1e-9)
    sizes = {int(min_bytes * 2 ** (i / per_octave)) // line_bytes * line_bytes for i in range(steps + 1)}
    sizes.add(max_bytes // line_bytes * line_bytes)
    return sorted(sizes)


def sweep_max_bytes(caches, mem_available_bytes, llc_multiple=4, memory_fraction=0.25):
    """llc_multiple x the largest cache, capped by a fraction of the host's available memory."""
    llc = max((int(c["size_bytes"]) for c in caches if c.get("type") != "Instruction"), default=0)
    if llc == 0:
        llc = 32 << 20  # no cache facts: assume a large LLC so the sweep still reaches DRAM
    cap = int(int(mem_available_bytes) * float(memory_fraction))
    return min(llc * int(llc_multiple), cap) // LINE_BYTES * LINE_BYTES


def size_points(sizes, argv, option="--sizes"):
    """One kernel invocation per working-set size: [{label, argv}] for tasks/run_points.yml."""
    return [{"label": f"working set {bytes_to_human(size)}", "argv": [*argv, option, str(size)]}
            for size in sizes]


class FilterModule:
    def filters(self):
        return {"sweep_sizes": sweep_sizes, "sweep_max_bytes": sweep_max_bytes,
                "size_points": size_points}
