"""Planning on hosts with more than one core kind (hybrid P/E cores, Arm big.LITTLE): the pinned
single-thread experiments run once per kind, on the kind's representative CPU; the thread sweep, affinity's
pinned threads and smt's placements take CPUs in kind order, fastest first, and their notes name the kind
of each step. The kinds come from the facts (`fleet_facts.topology.core_kinds`, fastest first); on a host
with one kind every plan is left exactly as it was."""

from __future__ import annotations


def _kinds(topology):
    return list((topology or {}).get("core_kinds") or [])


def core_kind_points(points, experiment, topology, experiments):
    """Each point once per core kind, its `--cpu` set to the kind's representative CPU and its label
    naming the kind, for the experiments listed (and only on a host with more than one kind)."""
    kinds = _kinds(topology)
    if len(kinds) < 2 or experiment not in experiments:
        return points
    planned = []
    for point in points:
        argv = list(point["argv"])
        if "--cpu" not in argv and "--threads" in argv:
            planned.append(point)  # a team of threads (a seed setting): it spans the kinds, once
            continue
        if "--cpu" not in argv:
            raise ValueError(f"{experiment}: a point to run per core kind has no --cpu: {point['label']}")
        position = argv.index("--cpu") + 1
        for kind in kinds:
            cpu = int(kind["representative_cpu"])
            planned.append(dict(point, argv=argv[:position] + [cpu] + argv[position + 1:],
                                label=f"{point['label']} on {kind['kind']} (CPU {cpu})",
                                core_kind=kind["kind"]))
    return planned


def core_kind_notes(topology, experiment, experiments, kernels_cpu):
    """What the plan did about core kinds, for the experiment's notes in the manifest."""
    kinds = _kinds(topology)
    if len(kinds) < 2 or experiment not in experiments:
        return []
    each = "; ".join(f"{kind['kind']} on CPU {kind['representative_cpu']} (of CPUs {kind['cpus']})" for kind in kinds)
    return [f"run once per core kind, on each kind's fastest CPU: {each} (kernels_cpu={kernels_cpu} not used)"]


def core_kind_cpu_order(topology):
    """The CPU order of the thread sweep, affinity and smt: kind by kind, fastest first, one CPU per
    physical core; then the SMT siblings in the same kind order. Returns {cpus: the order as a CPU list,
    cores: its first CPU of every core (affinity pins one thread per core), steps: for each thread count
    1..N the kind its newest thread runs on, leaders: how many CPUs lead a core}, or {} on a host with one
    kind (the kernels' own order, one CPU per core then siblings, stays)."""
    kinds = _kinds(topology)
    cpus = (topology or {}).get("cpus") or []
    if len(kinds) < 2 or not cpus:
        return {}
    kind_of = {cpu["cpu"]: cpu.get("kind") for cpu in cpus}
    rank = {kind["kind"]: index for index, kind in enumerate(kinds)}
    leaders, siblings, seen_cores = [], [], set()
    for cpu in sorted(cpus, key=lambda cpu: (rank.get(cpu.get("kind"), len(rank)), cpu["cpu"])):
        core = (cpu.get("package"), cpu.get("die"), cpu.get("core"), cpu.get("kind"))
        (siblings if core in seen_cores else leaders).append(cpu["cpu"])
        seen_cores.add(core)
    order = leaders + siblings
    steps = [kind_of[cpu] + (" SMT sibling" if cpu in siblings else "") for cpu in order]
    return {"cpus": ",".join(map(str, order)), "cores": ",".join(map(str, leaders)), "steps": steps,
            "leaders": len(leaders)}


def core_kind_order_note(order, cores_only=False):
    """The thread sweep's steps in words: 'threads 1-6: P-core; 7-14: E-core; 15-20: P-core SMT sibling'
    (`cores_only`: affinity's pinned threads, one per core, numbered from 0 as its records number them)."""
    if not order:
        return []
    steps = order["steps"][:order["leaders"]] if cores_only else order["steps"]
    cpus = order["cores"] if cores_only else order["cpus"]
    runs = []
    for index, step in enumerate(steps, start=0 if cores_only else 1):
        if runs and runs[-1][2] == step:
            runs[-1][1] = index
        else:
            runs.append([index, index, step])
    words = "; ".join(f"{low}-{high}: {step}" if high > low else f"{low}: {step}" for low, high, step in runs)
    if cores_only:
        return [f"pinned threads take one CPU per core by core kind ({cpus}): thread {words}"]
    return [f"CPUs ordered by core kind ({cpus}): threads {words}"]


def active_core_steps(order, fastest_kind_only=False):
    """The numbers of active cores core_clock and peak_flops step through on a host with more than one core
    kind (`order`: core_kind_cpu_order's, one CPU per core, fastest kind first): 1, 2, 4, ... and every kind
    boundary (all the fastest kind's cores, then those and the next kind's ...), ascending; [] on a host with one
    kind (the kernels' own steps, 1, 2, 4, ... and all). `fastest_kind_only`: only 1, the fastest kind's cores
    and all (peak_flops: one core, one kind, the whole CPU)."""
    if not order:
        return []
    kinds = order["steps"][:order["leaders"]]
    boundaries = [index + 1 for index in range(len(kinds)) if index + 1 == len(kinds) or kinds[index + 1] != kinds[index]]
    if fastest_kind_only:
        return sorted({1, boundaries[0], len(kinds)})
    powers = [2**exponent for exponent in range(len(kinds).bit_length()) if 2**exponent <= len(kinds)]
    return sorted(set(powers) | set(boundaries))


def cpu_kind(cpu, topology):
    """'CPU 12 (E-core)' on a host with more than one core kind, 'CPU 12' elsewhere (smt's notes)."""
    if len(_kinds(topology)) < 2:
        return f"CPU {cpu}"
    kind = {entry["cpu"]: entry.get("kind") for entry in (topology or {}).get("cpus") or []}.get(cpu)
    return f"CPU {cpu} ({kind})" if kind else f"CPU {cpu}"


class FilterModule:
    def filters(self):
        return {"core_kind_points": core_kind_points, "core_kind_notes": core_kind_notes,
                "core_kind_cpu_order": core_kind_cpu_order, "core_kind_order_note": core_kind_order_note,
                "cpu_kind": cpu_kind, "active_core_steps": active_core_steps}
