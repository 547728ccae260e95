"""Planning points: geometric sweeps in whole cache lines bounded by memory, and one kernel process
per combination of option values."""

from __future__ import annotations

import itertools
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


# Options whose values are byte counts, labelled 4.00 KB-style for people.
SIZE_OPTIONS = {"--sizes", "--size", "--footprint", "--dram-size"}


def _label(option: str, value) -> str:
    name = option.lstrip("-")
    if option in SIZE_OPTIONS:
        return f"{name} {bytes_to_human(int(value))}"
    return f"{name} {value}"


def grid_points(argv, axes=None):
    """[{label, argv}] for tasks/run_points.yml: argv extended by one value of each axis, for every
    combination. axes is a list of {option, values}; no axes (or an empty list) is one point."""
    axes = list(axes or [])
    for axis in axes:
        if not axis.get("values"):
            raise ValueError(f"grid_points: axis {axis.get('option')} has no values")
    combinations = itertools.product(*[[(axis["option"], value) for value in axis["values"]] for axis in axes])
    points = []
    for combination in combinations:
        extra = [str(item) for pair in combination for item in pair]
        label = ", ".join(_label(option, value) for option, value in combination) or "all points"
        points.append({"label": label, "argv": [*[str(item) for item in argv], *extra]})
    return points


def tlb_plan(argv, page_sizes, max_pages, min_pages, per_octave, page_strides=None):
    """The TLB experiment's points, one process per page size with its page counts, and the notes
    for page sizes left out. max_pages maps a page size to the most pages usable (for hugetlb: the
    free reserved pages). page_strides (bytes, 4 KiB pages only): one more 4k process per stride other
    than one page, its lines that far apart (OSTEP's page-stride sweep). Returns {"points": [{label,
    argv}], "notes": [str]}."""
    points, notes = [], []
    min_pages, per_octave = int(min_pages), int(per_octave)
    for size in page_sizes:
        top = int(max_pages.get(size, 0))
        if top < 2 * min_pages:
            reason = ("2 MiB pages reserved through tuning_nr_hugepages" if size == "hugetlb"
                      else "a larger tlb_max_pages")
            notes.append(f"{size} pages left out: only {top} usable, {2 * min_pages} needed ({reason})")
            continue
        pages = sweep_sizes(min_pages, top, per_octave, line_bytes=1)
        points.extend(grid_points([*argv, "--pages", ",".join(map(str, pages))],
                                  [{"option": "--page-size", "values": [size]}]))
        if size == "4k":
            strides = [int(stride) for stride in page_strides or [] if int(stride) != 4096]
            points.extend(grid_points([*argv, "--pages", ",".join(map(str, pages)), "--page-size", "4k"],
                                      [{"option": "--page-stride", "values": strides}]) if strides else [])
    return {"points": points, "notes": notes}


class FilterModule:
    def filters(self):
        return {"sweep_sizes": sweep_sizes, "sweep_max_bytes": sweep_max_bytes, "grid_points": grid_points,
                "tlb_plan": tlb_plan}
