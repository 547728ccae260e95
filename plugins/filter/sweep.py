"""Planning points: geometric sweeps in whole cache lines bounded by memory, one kernel process per
combination of option values, and the adaptive sweeps' extra points (refine_points: after the coarse pass,
points inside each rise of the latency and TLB curves until every step is bracketed to the profile's target,
chosen by fleetscope.analyze.refine on the controller, where fleetscope is installed for the warehouse)."""

from __future__ import annotations

import itertools
import json
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
    argv}], "notes": [str], "coarse": {page size: [page counts]}} (coarse: what the refinement counts its extra
    points from; the refinement refines the one-page-stride curves only)."""
    points, notes, coarse = [], [], {}
    min_pages, per_octave = int(min_pages), int(per_octave)
    for size in page_sizes:
        top = int(max_pages.get(size, 0))
        if top < 2 * min_pages:
            reason = ("2 MiB pages reserved through tuning_nr_hugepages" if size == "hugetlb"
                      else "a larger tlb_max_pages")
            notes.append(f"{size} pages left out: only {top} usable, {2 * min_pages} needed ({reason})")
            continue
        pages = sweep_sizes(min_pages, top, per_octave, line_bytes=1)
        coarse[size] = pages
        points.extend(grid_points([*argv, "--pages", ",".join(map(str, pages))],
                                  [{"option": "--page-size", "values": [size]}]))
        if size == "4k":
            strides = [int(stride) for stride in page_strides or [] if int(stride) != 4096]
            points.extend(grid_points([*argv, "--pages", ",".join(map(str, pages)), "--page-size", "4k"],
                                      [{"option": "--page-stride", "values": strides}]) if strides else [])
    return {"points": points, "notes": notes, "coarse": coarse}


def _refine_module():
    try:
        from fleetscope.analyze import refine
    except ImportError as error:  # the controller's Python lacks the package the warehouse play needs too
        raise ValueError("the adaptive sweeps choose their points with the fleetscope package, which the Python "
                         f"running ansible-playbook cannot import ({error}); install it (README, 'As an Ansible "
                         "collection') or set kernels_latency_sweep_refine_max_points and "
                         "kernels_tlb_refine_max_points to 0") from error
    return refine


def refine_rounds(points_per_octave, target_octaves, max_points):
    """How many refinement rounds an adaptive sweep takes at most: bisections from one coarse step to the
    target, and one more (0 when its budget of points is 0)."""
    if int(max_points) <= 0:
        return 0
    return _refine_module().rounds_needed(1 / int(points_per_octave), float(target_octaves))


def _records(jsonl):
    """The kernel records of a results file (lines that are not JSON objects are left to ingest to refuse)."""
    records = []
    for line in jsonl.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("params"), dict) and isinstance(record.get("summary"), dict):
            records.append(record)
    return records


def _with_cpu(argv, cpu):
    argv = [str(item) for item in argv]
    if cpu is not None and "--cpu" in argv:
        argv[argv.index("--cpu") + 1] = str(cpu)
    return argv


def _latency_curves(records, policies):
    """{(cpu, page policy): {size: fastest sample}} of the policy the hierarchy is read from: THP where the
    sweep measured it, else its first policy (as the report picks it, fleetscope.report.charts.one_policy)."""
    measured = {record["params"].get("page_policy") for record in records}
    policy = "thp" if "thp" in measured else next((name for name in policies if name in measured), None)
    curves = {}
    for record in records:
        params, fastest = record["params"], record["summary"].get("min")
        size = params.get("working_set_bytes")
        if params.get("page_policy") != policy or not isinstance(size, int) or not isinstance(fastest, (int, float)):
            continue
        curve = curves.setdefault((params.get("cpu"), policy), {})
        curve[size] = min(fastest, curve.get(size, math.inf))
    return curves


def _tlb_curves(records):
    """{(cpu, page size): {pages: (ns per access as an L1-resident chain would see it, the control chain's ns)}}:
    the control chain's L1 latency at the fewest pages plus the paired TLB-minus-control difference, as the
    warehouse reads it (fleetscope.analyze.derive, clipped at minus half the L1 latency), and the control's own
    (None where it was not measured at that page count)."""
    control, difference = {}, {}
    for record in records:
        params = record["params"]
        key, pages = (params.get("cpu"), params.get("page_size")), params.get("pages")
        if not isinstance(pages, int) or params.get("page_stride_bytes") not in (None, 4096):
            continue  # a sweep by page stride is its own curve, not refined
        if params.get("chain") == "control" and isinstance(record["summary"].get("min"), (int, float)):
            control.setdefault(key, {})[pages] = record["summary"]["min"]
        paired = (record.get("context") or {}).get("paired_difference_median_ns")
        if params.get("chain") == "tlb" and isinstance(paired, (int, float)):
            difference.setdefault(key, {})[pages] = paired
    curves = {}
    for key, differences in difference.items():
        if not control.get(key):
            continue
        l1_ns = control[key][min(control[key])]
        curves[key] = {pages: (l1_ns + max(value, -0.5 * l1_ns), control[key].get(pages))
                       for pages, value in differences.items()}
    return curves


def _drop_options(argv, options):
    """argv without each of `options` and the value after it."""
    argv, kept, skip = [str(item) for item in argv], [], False
    for index, item in enumerate(argv):
        if skip:
            skip = False
            continue
        if item in options and index + 1 < len(argv):
            skip = True
            continue
        kept.append(item)
    return kept


def refine_spec(points, experiment, octaves, max_points, policies=None, max_bytes=None, page_sizes=None,
                rounds=None, guest=False):
    """The adaptive sweep's spec for refine_points, taken from the plan's processes of `experiment`
    (plugins/filter/plan.py, plan_points): the refinement's kernel options are the coarse processes' own with
    the working set (--sizes, --page-policy) or the page counts (--pages, --page-size) left out, the coarse
    sizes (latency: a list; tlb: {page size: page counts}) are what those processes measure, and the rounds
    follow from the coarse pass's density as the plan left it (a budget may have thinned it). max_bytes: the
    largest working set a refinement point may take (the plan priced them up to it; None: no bound); page_sizes:
    the TLB curves to refine (the plan's refine_page_sizes; None: every one); rounds: the most rounds the plan
    priced (refine_rounds; None: as many as the density needs); guest: the host is a guest (facts
    cpu.hypervisor_flag), whose huge pages its host may back with 4 KiB pages: the refinement then reads every
    curve's lines as falling at random on 4 KiB frames, as the warehouse will."""
    points = list(points or [])
    if not points:
        return {"experiment": experiment, "argv": [], "coarse": {} if experiment == "tlb" else [],
                "policies": list(policies or []), "octaves": octaves, "max_points": 0, "rounds": 0, "max_bytes": None,
                "page_sizes": page_sizes, "guest": bool(guest)}
    sweep = ("--pages", "--page-size") if experiment == "tlb" else ("--sizes", "--page-policy")
    # a 4k sweep by page stride is a curve of its own (kernels_tlb_page_strides): not refined
    points = [point for point in points if "--page-stride" not in [str(item) for item in point["argv"]]]
    if not points:
        return refine_spec([], experiment, octaves, max_points, policies, max_bytes, page_sizes, rounds, guest)
    argv = _drop_options(points[0]["argv"], sweep)
    coarse = {} if experiment == "tlb" else set()
    for point in points:
        point_argv = [str(item) for item in point["argv"]]
        values = [int(value) for value in point_argv[point_argv.index(sweep[0]) + 1].split(",")]
        if experiment == "tlb":
            coarse.setdefault(point_argv[point_argv.index("--page-size") + 1], set()).update(values)
        else:
            coarse.update(values)
    series = list(coarse.values()) if experiment == "tlb" else [coarse]
    gaps = sorted(math.log2(b / a) for values in series for a, b in zip(sorted(values), sorted(values)[1:]) if a > 0)
    per_octave = max(1, round(1 / gaps[len(gaps) // 2])) if gaps else 1
    return {"experiment": experiment, "argv": argv,
            "coarse": {size: sorted(values) for size, values in coarse.items()} if experiment == "tlb" else sorted(coarse),
            "policies": list(policies or []), "octaves": octaves, "max_points": int(max_points),
            "rounds": min(refine_rounds(per_octave, octaves, max_points),
                          int(rounds) if rounds not in (None, "") else 99),
            "max_bytes": int(max_bytes) if max_bytes not in (None, "") else None,
            "page_sizes": list(page_sizes) if page_sizes not in (None, "") else None, "guest": bool(guest)}


def refine_points(jsonl, spec):
    """The next round of an adaptive sweep: [{label, argv}] for the sizes inside each rise whose bracket is
    still wider than spec.octaves, at most spec.max_points beyond the coarse pass per curve (fleetscope.analyze
    .refine). `jsonl` is the experiment's results file so far; spec: {experiment: latency_sweep | tlb, argv:
    the coarse pass's command (its --cpu replaced by each curve's), coarse: the sizes the coarse pass planned
    (latency: a list; tlb: {page size: page counts}), policies: the latency sweep's page policies, octaves,
    max_points, and where the role loops: rounds, the most rounds, and round, this one from 0}. A round is one
    process per curve: the latency sweep's THP curve (or the first policy's) per CPU, its sizes in one --sizes
    list; a TLB curve per page size and CPU. A round spends at most its share of what a curve has left (a half in
    the first of two rounds): the points of the last round go where the earlier ones moved the brackets."""
    refine = _refine_module()
    records = _records(jsonl)
    octaves, max_points = float(spec["octaves"]), int(spec["max_points"])
    rounds_left = max(1, int(spec.get("rounds") or 1) - int(spec.get("round") or 0))
    points = []
    if spec["experiment"] == "tlb":
        for (cpu, page_size), curve in sorted(_tlb_curves(records).items(), key=str):
            if spec.get("page_sizes") is not None and page_size not in spec["page_sizes"]:
                continue  # a curve the plan did not price a refinement for keeps its coarse brackets
            coarse = {int(pages) for pages in (spec["coarse"].get(page_size) or [])}
            budget = math.ceil((max_points - len(set(curve) - coarse)) / rounds_left)
            pages = sorted(curve)
            controls = [curve[count][1] for count in pages]
            chosen = refine.tlb_refinement(pages, [curve[count][0] for count in pages], target_octaves=octaves,
                                           budget=budget, control_ns=None if None in controls else controls)
            if chosen:
                label = f"refine {page_size} pages {','.join(map(str, sorted(chosen)))}" + (f" (CPU {cpu})" if cpu is not None else "")
                points.append({"label": label, "argv": _with_cpu(spec["argv"], cpu) + [
                    "--pages", ",".join(map(str, sorted(chosen))), "--page-size", page_size]})
        return points
    from fleetscope.analyze.inference import CurveReading

    coarse = {int(size) for size in spec["coarse"]}
    for (cpu, policy), curve in sorted(_latency_curves(records, spec.get("policies") or []).items(), key=str):
        budget = math.ceil((max_points - len(set(curve) - coarse)) / rounds_left)
        sizes = sorted(curve)
        reading = CurveReading("random-lines", 2097152 if policy in ("thp", "hugetlb") and not spec.get("guest") else 4096)
        chosen = sorted(refine.cache_refinement(sizes, [curve[size] for size in sizes], target_octaves=octaves,
                                                budget=budget, reading=reading, max_bytes=spec.get("max_bytes")))
        if chosen:
            # one process a round, each size still on a fresh buffer (as the plan's grouped coarse pass): a
            # process start costs more than most refinement points (plugins/filter/plan.py, PROCESS_S)
            label = (f"refine sizes {', '.join(bytes_to_human(size) for size in chosen)}, page-policy {policy}"
                     + (f" (CPU {cpu})" if cpu is not None else ""))
            points.append({"label": label, "argv": _with_cpu(spec["argv"], cpu) + [
                "--sizes", ",".join(map(str, chosen)), "--page-policy", policy]})
    return points


class FilterModule:
    def filters(self):
        return {"sweep_sizes": sweep_sizes, "sweep_max_bytes": sweep_max_bytes, "grid_points": grid_points,
                "tlb_plan": tlb_plan, "refine_points": refine_points, "refine_rounds": refine_rounds,
                "refine_spec": refine_spec}
