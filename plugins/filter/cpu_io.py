"""Planning the aio experiment: which of the requested I/O engines the host can run (from the kernel's
`aio --plan`), and how big the scratch file may be in the free space of its directory."""

from __future__ import annotations

MIB = 1 << 20
# Below this a file is too small to read randomly without the device's cache answering everything.
MIN_AIO_BYTES = 16 * MIB


def _human(value: int) -> str:
    for factor, unit in ((1 << 30, "GiB"), (MIB, "MiB"), (1 << 10, "KiB")):
        if value >= factor:
            return f"{value / factor:.4g} {unit}"
    return f"{value} B"


def aio_plan(plan, engines, df_result, size_bytes, margin_bytes, directory, block_size):
    """{engines, size_bytes, notes, skip} for the aio experiment.

    plan: the kernel's `aio --plan` object ({engines: [{engine, available, reason}]}); engines: the
    requested engines in order; df_result: the registered `df --output=avail --block-size=1 DIR`.
    The file is size_bytes, cut to (free space - margin_bytes) in whole MiB; an experiment with no
    engine or under 16 MiB of room is skipped with the reason in its notes.
    """
    available = {entry["engine"]: entry for entry in plan.get("engines", [])}
    notes, chosen = [], []
    for engine in engines:
        entry = available.get(engine)
        if entry is None:
            notes.append(f"{engine} left out: this kernel build does not know it")
        elif not entry.get("available"):
            notes.append(f"{engine} left out: {entry.get('reason') or 'unavailable'}")
        else:
            chosen.append(engine)
    if not chosen:
        return {"engines": [], "size_bytes": 0, "notes": notes + ["no requested I/O engine can run on this host"],
                "skip": True}
    lines = (df_result.get("stdout") or "").strip().splitlines()
    if df_result.get("rc") != 0 or not lines or not lines[-1].strip().isdigit():
        reason = (df_result.get("stderr") or df_result.get("msg") or "no output").strip()
        return {"engines": chosen, "size_bytes": 0, "skip": True,
                "notes": notes + [f"cannot measure the free space of {directory}: {reason}"]}
    free = int(lines[-1].strip())
    wanted = int(size_bytes)
    room = free - int(margin_bytes)
    size = min(wanted, room) // MIB * MIB
    size -= size % int(block_size)
    if size < MIN_AIO_BYTES:
        return {"engines": chosen, "size_bytes": 0, "skip": True,
                "notes": notes + [f"{directory} has {_human(free)} free: after the {_human(int(margin_bytes))} "
                                  f"margin (kernels_aio_free_space_margin) there is no room for a scratch file of "
                                  f"at least {_human(MIN_AIO_BYTES)}"]}
    if size < wanted:
        notes.append(f"scratch file cut from {_human(wanted)} to {_human(size)}: {directory} has {_human(free)} free "
                     f"and {_human(int(margin_bytes))} stay free (kernels_aio_free_space_margin)")
    return {"engines": chosen, "size_bytes": size, "notes": notes, "skip": False}


def aio_points(points, plan):
    """The host plan's aio processes (one per engine, or one for every engine where a budget grouped them:
    `--engines E[,E...] --size S`) for what this host can run: the engines aio_plan kept, reading the file
    size it chose (never larger than planned); a process left with no engine is left out."""
    kept = []
    for point in points:
        argv = list(point["argv"])
        position = argv.index("--engines") + 1
        engines = [engine for engine in argv[position].split(",") if engine in plan["engines"]]
        if not engines:
            continue
        argv[position] = ",".join(engines)
        position = argv.index("--size") + 1
        argv[position] = str(min(int(argv[position]), int(plan["size_bytes"])))
        kept.append(dict(point, argv=argv))
    return kept


class FilterModule:
    def filters(self):
        return {"aio_plan": aio_plan, "aio_points": aio_points}
