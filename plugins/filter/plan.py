"""The plan of a host's run, with its price: from the host's facts and the run's settings, every kernel
process each enabled experiment will start (the argv the kernels role runs, nothing else), the points
(records) they will write, and an upper bound on their time, per experiment and in total.

One function per experiment builds its processes (`_PLANNERS`); `host_plan` prices them and, where the
profile has a budget (quick 120 s, standard 900 s of experiments per host), fits each experiment into its
allowance (`__kernels_profiles[<profile>].allowance_s`) by cutting, in a fixed order, what costs most on
that host: the time cap per point, sweep density, DRAM working sets, thread steps, c2c pairs. Each cut
is said in the experiment's notes ("c2c: 96 of 16,256 ordered pairs, every LLC domain pair covered"),
so a budget never silently changes a number. `full` has no budget: its plan states its own price.

The price of a point is the time model below (dev VM, docs/methods.md "The plan and its price"): a
process's start, a buffer's mapping and chain, calibration, and sampling to its cap on every try. It is
an upper bound as far as the model's rates hold on the host: a host slower than them (a busy machine,
an over-committed VM) can overshoot, and the warehouse flags an experiment that ran more than 25% past
its price (view plan_vs_actual). The same functions serve the kernels role (tasks/plan.yml runs them
before measuring and the experiments run the plan's points), preflight (which prints each host's
price) and `fleetscope plan` (a host that is not at hand, from its facts or a sysfs tree). The other measuring
roles price their own experiments with the functions at the end (fio_price, mlc_price, workloads_price) and the
plan lists them too: fio within the budget, MLC and the workloads on top of it (OUTSIDE_BUDGET says why).
"""

from __future__ import annotations

import importlib.util
import itertools
import math
from collections.abc import Mapping
from pathlib import Path


def _sibling(name: str):
    """A filter module of this folder, loaded by path: Ansible, the tests and `fleetscope plan` load this
    file by path too, so no package import can be assumed."""
    path = Path(__file__).resolve().parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"fleetscope_plan_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_sweep = _sibling("sweep")
_numa = _sibling("numa")
_kinds = _sibling("core_kinds")
_teams = _sibling("teams")

GIB = 1 << 30
MIB = 1 << 20
LINE = 64

# ---- The time model (dev VM: 2-vCPU Zen 4 KVM guest; each rate a measured worst, docs/methods.md) ----
# One kernel process: exec by the points module (was an Ansible loop item: measured then, not re-measured since),
# perf stat, the kernel's core-clock and canary set-up.
PROCESS_S = 0.8
# An experiment's own tasks inside its recorded wall time (the points module's call, the record).
EXPERIMENT_S = 0.4
# An adaptive sweep's refinement round beside its process: reading the results so far, choosing the points on the
# controller, keeping what ran (tasks/refine_round.yml; 2 rounds of tlb took 3.1 s with one small process each).
REFINE_ROUND_S = 0.8
# Mapping and first touch of a buffer, per byte: in a VM every new page is also an exit to the host,
# and a 2 MiB page may wait for compaction (dev VM: 2.4-3 s per GiB either way).
FAULT_S_PER_BYTE = 3.0 / GIB
FAULT_S_PER_BYTE_4K = 3.0 / GIB
# Linking a random cycle and walking it once (self-check and warm-up), per line: within the last-level
# cache, and beyond it (two dependent misses per line; 4 KiB pages add a page walk to each).
CHAIN_LINE_S_CACHE = 0.05e-6
CHAIN_LINE_S_DRAM = 0.5e-6
CHAIN_LINE_S_DRAM_4K = 0.8e-6
# Streaming one buffer from DRAM with one thread, and what a team of threads adds per thread up to a
# few per NUMA node (past that they share the node's memory bandwidth).
STREAM_BYTES_PER_S = 5e9
CACHE_BYTES_PER_S = 20e9
# A line read in random order from DRAM (stride_bandwidth's random pattern, one thread).
RANDOM_LINE_S = 100e-9
STREAM_THREADS_PER_NODE = 4
# A calibrated sample lands up to 25% past --min-sample-ms; calibration takes about four samples.
SAMPLE_OVERSHOOT = 1.25
CALIBRATION_SAMPLES = 4
# A saxpy update that misses (stride >= 8 elements: a line of its own in both arrays), and one that hits.
SAXPY_MISS_S = 40e-9
SAXPY_HIT_S = 2e-9
# One c2c pair: thread start, the 5 ms warm-up, canaries; the first pair on a CPU also measures its clock.
C2C_PAIR_S = 0.02
CORECLOCK_S = 0.06
# Every pair of LLC domains gets a c2c pair: past this many domains (no real host has them; 2 sockets of
# 128 cores, each its own L2 as the last level sysfs shows, have 256) the pairs would grow as its square.
C2C_MAX_DOMAINS = 1024
# aio: writing its scratch file once per process (bytes per second).
AIO_WRITE_BYTES_PER_S = 200e6
# The compute family (core_clock, peak_flops): a point is its windows (one warm-up, then the measured
# ones; peak_flops alternates a multiply-add window with a clock window), plus the threads' start and the
# canaries around it; a ramp sleeps kernels_core_clock_idle_ms, then runs kernels_core_clock_ramp_ms.
# Dev VM worst per point: core_clock 40/120/240 ms, peak_flops 90/250/490 ms (quick/standard/full).
COMPUTE_POINT_S = 0.01
# `auto` runs every class the CPU has: at most 4 on any build (x86 scalar + fma128/256/512; AArch64 3).
COMPUTE_AUTO_CLASSES = 4
# fio: the engine and O_DIRECT probes, laying out the scratch file, the record.
FIO_SETUP_S = 6.0
FIO_LAYOUT_BYTES_PER_S = 200e6
# A point that stopped at its time cap while its samples drifted is measured once more after the others; the plan
# prices that for this share of a process's points (rounded down: a process of fewer than 10 points measures none
# again) and the kernel re-queues no more (--max-requeues), recording a later drifting point as drifting. Unpriced,
# the second attempts took 17-56% more time than the standard plan on the shared dev VM (load 5-8).
REQUEUE_SHARE = 0.1
# The most last-level cache a CPU sharing it gets on any part (Zen 4/5 X3D: 96 MiB over 16 threads, 6 MiB): a
# sysfs that reports more per CPU is a guest seeing its host's cache, and the price does not count on it.
TRUSTED_LLC_PER_CPU = 8 * MIB
# A time cap per point is never cut below this (seconds), nor a DRAM working set below this.
CAP_FLOOR_S = 0.25
DRAM_FLOOR_BYTES = 64 * MIB

# The budget of experiments per host per profile (seconds): the contract of README "Profiles".
BUDGET_S = {"quick": 120, "standard": 900, "full": None}


# ---- Reading the facts ----

def _int(value, default=0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _cpu_count(cpulist) -> int:
    """How many CPUs a sysfs cpulist ('0-7,16-23') names (0 where it names none or cannot be read)."""
    count = 0
    for item in str(cpulist or "").split(","):
        first, _dash, last = item.strip().partition("-")
        if first.isdigit() and (not last or last.isdigit()):
            count += int(last or first) - int(first) + 1
    return count


class PlanInputError(ValueError):
    """A setting the host cannot be planned with (a pinned CPU it does not have): the run's input, not a plan's fault."""


def _check_pinned_cpu(variables: Mapping, host: Host) -> None:
    """kernels_cpu names a CPU of the host: every pinned point runs there. Checked as the plan is made, so preflight
    refuses it before any host is changed (a task of its own did, on every host, once the host was tuned)."""
    cpu = variables.get("kernels_cpu", 0)
    try:
        number = int(cpu)  # -e kernels_cpu=N gives text
    except (TypeError, ValueError):
        raise PlanInputError(f"kernels_cpu={cpu!r} is not a CPU number") from None
    if not 0 <= number < host.cpus:
        raise PlanInputError(f"kernels_cpu={cpu} but this host has {host.cpus} CPUs (0-{host.cpus - 1})")


class Host:
    """What the plan needs of a host, from its facts (plugins/modules/fleetscope_facts.py)."""

    def __init__(self, facts: dict):
        facts = facts or {}
        cpu = facts.get("cpu") or {}
        self.facts = facts
        self.topology = facts.get("topology") or {}
        # no more CPUs than a CPU list may name: the count sizes the c2c and thread-count plans
        self.cpus = min(max(1, _int(cpu.get("logical_cpus"), 1)), _numa.MAX_CPU + 1)
        self.cores = min(max(1, _int(cpu.get("physical_cores"), self.cpus) or self.cpus), self.cpus)
        self.caches = [c for c in facts.get("caches") or [] if c.get("type") != "Instruction"]
        self.llc = max((_int(c.get("size_bytes")) for c in self.caches), default=0) or 32 * MIB
        # What the price counts as a chain the last-level cache holds: at most TRUSTED_LLC_PER_CPU for each CPU
        # sharing it. A guest's sysfs may report its host's whole last-level cache (a Zen 5 guest: 480 MiB on 2
        # vCPUs) of which it gets a small share; a chain beyond that is linked at the DRAM rate (quick with a
        # faked 480 MiB L3: zero_queue's 240 MiB chain took 1.45x the price that assumed the LLC held it).
        last = max(self.caches, key=lambda c: _int(c.get("size_bytes")), default={})
        sharing = max(1, _cpu_count(last.get("shared_cpu_list")))
        self.cached = min(self.llc, TRUSTED_LLC_PER_CPU * sharing)
        self.kinds = list(self.topology.get("core_kinds") or [])
        self.numa = facts.get("numa") or {}
        self.nodes = max(1, _int(self.numa.get("nodes"), 1))
        self.mem_available = _int((facts.get("memory") or {}).get("mem_available_bytes"))
        self.smt = any(_int(kind.get("threads_per_core"), 1) > 1 for kind in self.kinds) or \
            _int(cpu.get("threads_per_core"), 1) > 1

    def stream_threads(self, threads: int) -> int:
        """How many of `threads` add bandwidth in the model."""
        return max(1, min(int(threads), STREAM_THREADS_PER_NODE * self.nodes))


# ---- One experiment's plan ----

class Exp:
    """One experiment's processes ({label, argv}), the points they write, their price and notes."""

    def __init__(self, name: str):
        self.name = name
        self.processes: list[dict] = []
        self.records = 0
        self.bound_s = 0.0
        self.notes: list[str] = []
        self.cuts: list[str] = []
        self.skip: str | None = None
        self.target_rel: float | None = None
        self.cap_s: float | None = None
        self.allowance_s: float | None = None
        self.kinds = 1
        self.refine_max_points: int | None = None  # an adaptive sweep's bound (latency_sweep, tlb), else None
        self.refine_max_bytes: int | None = None   # the latency sweep's largest refinement working set
        self.refine_page_sizes: list[str] | None = None  # the TLB curves the adaptive sweep refines
        self.refine_rounds: int | None = None  # the adaptive sweep's most rounds, as priced
        self.knobs: dict = {}  # the budget's cuts that fitted it (_fit)

    def add(self, label: str, argv: list, records: int, bound_s: float, kinds: int = 1) -> None:
        """One kernel process (once per core kind where the role runs it per kind: `kinds`). A process that
        samples to a target may measure some points again (those that drift to their cap): as many as the
        plan prices here (REQUEUE_SHARE of its points, each at the process's price per point), no more."""
        if "--target-ci" in argv and records:
            requeues = int(records * REQUEUE_SHARE)
            argv = [*argv, "--max-requeues", requeues]
            bound_s += requeues * bound_s / records
        self.processes.append({"label": label, "argv": [str(item) for item in argv]})
        self.records += records * kinds
        self.bound_s += (PROCESS_S + bound_s) * kinds

    def record(self) -> dict:
        """What the manifest keeps of it (no argv: the bundle's results say what ran)."""
        return {"name": self.name, "points": self.records, "processes": len(self.processes),
                "bound_s": round(self.bound_s + (EXPERIMENT_S if self.processes or self.skip else 0.0), 3),
                "allowance_s": self.allowance_s, "target_rel": self.target_rel, "cap_s": self.cap_s,
                "kinds": self.kinds, "skip": self.skip, "notes": self.notes, "cuts": self.cuts}


class Context:
    """The settings one experiment is planned with, and the pricing helpers every planner shares."""

    def __init__(self, host: Host, settings: dict, experiment: str, knobs: dict):
        self.host = host
        self.settings = settings
        self.experiment = experiment
        self.knobs = knobs
        self.var = settings.get("variables") or {}
        self.table = settings.get("table") or {}
        paths = settings.get("paths") or {}
        self.bin = paths.get("bin", "fleetscope-kernels")
        self.bundle = paths.get("bundle", ".")
        self.samples = _int(knobs.get("samples")) or _int(self.var.get("kernels_samples"),
                                                          _int(self.table.get("samples"), 11))
        self.min_sample_ms = float(self.var.get("kernels_min_sample_ms") or self.table.get("min_sample_ms") or 10)
        self.tries = _int(knobs.get("tries")) or _int(self.table.get("tries"), 0)
        mem = host.mem_available
        self.max_bytes = mem // 4 // (2 * MIB) * (2 * MIB)
        precision = {"target_ci": self.var.get("kernels_target_ci", self.table.get("target_ci")),
                     "max_point_s": self.var.get("kernels_max_point_s", self.table.get("max_point_s"))}
        precision.update((self.var.get("kernels_precision") or {}).get(experiment) or {})
        if experiment in FIXED_WINDOWS:  # a fixed number of windows (no --target-ci, no time cap)
            precision = {}
        self.target = float(precision["target_ci"]) if precision.get("target_ci") not in (None, "", 0) else None
        cap = precision.get("max_point_s")
        self.cap = float(cap) if self.target and cap not in (None, "") else (10.0 if self.target else None)
        if self.target and knobs.get("cap_scale", 1.0) < 1.0:
            self.cap = max(CAP_FLOOR_S, round(self.cap * knobs["cap_scale"], 3))

    @property
    def kind_count(self) -> int:
        """How many times the role runs each of this experiment's points (once per core kind; once, on the
        fastest kind, where the budget cut the others)."""
        experiments = self.var.get("kernels_per_core_kind_experiments") or []
        if not self.var.get("kernels_per_core_kind", True) or self.experiment not in experiments \
                or self.knobs.get("one_kind"):
            return 1
        return max(1, len(self.host.kinds))

    @property
    def cpu(self):
        """The CPU a pinned point runs on: kernels_cpu, or the fastest kind's own where the budget measures
        one kind of several (the role sets it per kind otherwise)."""
        if self.knobs.get("one_kind") and len(self.host.kinds) > 1:
            return self.host.kinds[0].get("representative_cpu", 0)
        return self.var.get("kernels_cpu", 0)

    def common(self, min_sample_ms=None) -> list:
        """The options every process of the experiment passes (the kernels role's common options)."""
        argv = ["--experiment", self.experiment, "--samples", self.samples,
                "--min-sample-ms", self.min_sample_ms, "--max-bytes", self.max_bytes,
                "--output", f"{self.bundle}/results/{self.experiment}.jsonl"]
        if self.target:
            argv += ["--target-ci", self.target, "--max-point-seconds", self.cap]
        if self.tries:
            argv += ["--tries", self.tries]
        if min_sample_ms is not None:
            argv += ["--min-sample-ms", min_sample_ms]
        return argv

    # -- pricing --
    def sample_s(self, round_s: float = 0.0, min_sample_ms=None) -> float:
        ms = self.min_sample_ms if min_sample_ms is None else float(min_sample_ms)
        return max(ms / 1000.0 * SAMPLE_OVERSHOOT, round_s)

    def sampling_s(self, sample_s: float, series: int = 1) -> float:
        """One try's samples: a fixed count, or at least that many and on to the cap (plus the sample
        that crosses it). `series` samples make one step (a tlb pair's two chains)."""
        step = sample_s * series
        fixed = self.samples * step
        return fixed if not self.target else max(fixed, self.cap) + step

    def measure_s(self, sample_s: float, series: int = 1, tries: int = 1, round_s: float = 0.0) -> float:
        """Calibration (about four samples; two rounds where one round is already a whole sample), then
        every try sampled to its cap."""
        calibration = 2 * round_s if round_s * 1000 >= self.min_sample_ms else CALIBRATION_SAMPLES * sample_s
        return calibration * series + max(1, tries) * self.sampling_s(sample_s, series)

    def chain_setup_s(self, span: int, lines: int, policy: str = "thp") -> float:
        fault = span * (FAULT_S_PER_BYTE_4K if policy == "4k" else FAULT_S_PER_BYTE)
        if span <= self.host.cached:
            per_line = CHAIN_LINE_S_CACHE
        else:
            per_line = CHAIN_LINE_S_DRAM_4K if policy == "4k" else CHAIN_LINE_S_DRAM
        return fault + lines * per_line

    def latency_point_s(self, span: int, lines: int | None = None, policy: str = "thp") -> float:
        """A latency-engine point: its buffer and chain, calibration, and every try to the cap."""
        lines = span // LINE if lines is None else lines
        return self.chain_setup_s(span, lines, policy) + self.measure_s(self.sample_s(), tries=self.tries or 3)

    def stream_point_s(self, bytes_per_thread: int, threads: int = 1, passes: float = 1.0,
                       min_sample_ms=None) -> float:
        """A bandwidth point: every thread's buffer set up once, then samples of at least one pass."""
        total = bytes_per_thread * threads
        rate = (STREAM_BYTES_PER_S if bytes_per_thread > self.host.llc else CACHE_BYTES_PER_S) \
            * self.host.stream_threads(threads)
        # each thread touches its own buffer: faults go in parallel as far as the memory system lets them
        setup = total * FAULT_S_PER_BYTE / self.host.stream_threads(threads) + total / rate
        round_s = passes * total / rate
        return setup + self.measure_s(self.sample_s(round_s, min_sample_ms), round_s=round_s)


def _dram_bytes(ctx: Context, rule_bytes: int, knob: str = "dram_scale", threads: int = 1) -> int:
    """A DRAM working set: the rule's, cut by the budget's scale, never under DRAM_FLOOR_BYTES (or the
    rule's own size where that is smaller; a team's threads share it: each gets its part, at least 4 MiB),
    whole 2 MiB pages where possible, within the memory cap."""
    size = min(int(rule_bytes), ctx.max_bytes or int(rule_bytes))
    scale = ctx.knobs.get(knob, 1.0)
    floor = max(DRAM_FLOOR_BYTES // max(1, threads), 4 * MIB)
    if scale < 1.0:
        size = max(min(size, floor), int(size * scale))
    step = 2 * MIB if size >= 4 * MIB else LINE
    return max(LINE * 2, size // step * step)


def _human(size: int) -> str:
    for factor, unit in ((GIB, "GiB"), (MIB, "MiB"), (1 << 10, "KiB")):
        if size >= factor:
            return f"{size / factor:.4g} {unit}"
    return f"{size} B"


def _seconds(value: float) -> str:
    """1 m 54 s, 42 s, 3.2 s."""
    if value >= 3600:
        hours, minutes = divmod(round(value / 60), 60)
        return f"{hours} h {minutes} m" if minutes else f"{hours} h"
    if value >= 60:
        minutes, seconds = divmod(round(value), 60)
        return f"{minutes} m {seconds} s" if seconds else f"{minutes} m"
    return f"{value:.0f} s" if value >= 10 else f"{value:.2g} s"


def _note_dram(ctx: Context, exp: Exp, size: int, rule: int, what: str, threads: int = 1) -> None:
    """Say a working set the budget cut, and where it may no longer be DRAM-sized: under twice the last-level
    cache (a team's buffers together, against every LLC domain's)."""
    if size < rule:
        words = f"{what} cut from {_human(rule)} to {_human(size)} (budget)"
        domains = len(ctx.host.topology.get("llc_domains") or []) or 1
        if size * threads < 2 * ctx.host.llc * (domains if threads > 1 else 1):
            words += (f": under twice the {_human(ctx.host.llc)} last-level cache sysfs reports, so part of it "
                      "may still be served by that cache")
        exp.cuts.append(words)


# ---- The experiments ----

def _refine_rounds(per_octave: int, target_octaves) -> int:
    """The most refinement rounds from a coarse step of 1/per_octave octave to the target: one dividing every
    bracket into target-wide parts, and one for a step that moved (fleetscope.analyze.refine.rounds_needed, which
    the role's filter calls)."""
    target = float(target_octaves or 0.125)
    return (1 if 1 / max(1, per_octave) > target * 1.1 else 0) + 1


def _refine_bound(ctx: Context, exp: Exp, variable: str, column: str, what: str) -> int:
    """An adaptive sweep's most refinement points (its role variable, else the profile's column), halved by
    the budget's `refine_scale`, said where cut; kept on the plan (refine_max_points) for the role to run."""
    natural = max(0, _int(ctx.var.get(variable), _int(ctx.table.get(column))))
    refine = int(natural * ctx.knobs.get("refine_scale", 1.0))
    if refine < natural:
        exp.cuts.append(f"at most {refine} refinement {what} instead of {natural} (budget)" if refine else
                        f"no refinement {what} instead of up to {natural} (budget): sizes are the coarse pass's brackets")
    exp.refine_max_points = refine
    return refine


def _latency_sweep(ctx: Context) -> Exp:
    exp = Exp("latency_sweep")
    var, host = ctx.var, ctx.host
    per_octave = _int(ctx.knobs.get("per_octave") or var.get("kernels_latency_sweep_points_per_octave"), 1)
    rule = _int(var.get("kernels_latency_sweep_max_bytes")) \
        or _sweep.sweep_max_bytes(host.caches or [], host.mem_available or 1 << 40)
    top = _dram_bytes(ctx, rule, "size_scale") // LINE * LINE
    _note_dram(ctx, exp, top, rule, "largest working set")
    sizes = _sweep.sweep_sizes(_int(var.get("kernels_latency_sweep_min_bytes"), 4096), top, per_octave)
    policies = list(var.get("kernels_latency_sweep_page_policies") or ["thp", "4k"])
    argv = [ctx.bin, "chase", "--cpu", ctx.cpu, *ctx.common()]
    worst = {}
    if ctx.knobs.get("group"):
        # One process per page policy, the kernel shuffling the sizes (each still on a fresh buffer).
        for point in _sweep.grid_points([*argv, "--sizes", ",".join(map(str, sizes))],
                                        [{"option": "--page-policy", "values": policies}]):
            costs = [ctx.latency_point_s(size, policy=point["argv"][-1]) for size in sizes]
            worst[point["argv"][-1]] = max(costs)
            exp.add(point["label"], point["argv"], len(sizes), sum(costs), ctx.kind_count)
        exp.cuts.append("every size of a page policy in one process instead of one process per size (budget): "
                        "perf stat then counts the whole sweep, not each point")
    else:
        for point in _sweep.grid_points(argv, [{"option": "--sizes", "values": sizes},
                                               {"option": "--page-policy", "values": policies}]):
            size, policy = int(point["argv"][-3]), point["argv"][-1]
            cost = ctx.latency_point_s(size, policy=policy)
            worst[policy] = max(worst.get(policy, 0.0), cost)
            exp.add(point["label"], point["argv"], 1, cost, ctx.kind_count)
    refine = _refine_bound(ctx, exp, "kernels_latency_sweep_refine_max_points", "refine_max_points", "points")
    if refine and exp.processes:
        # The adaptive sweep's bisection points (issue 28, run by tasks/run_points.yml after the coarse pass):
        # at most `refine` more processes per core kind, on the curve it refines (THP, else the first policy),
        # each priced as that curve's costliest coarse point.
        # A round is one process (its sizes in one list) and the round's own tasks, at most min(rounds, refine).
        # Its points stay within twice the largest cache the host reports (the rises the sizes are read from; the
        # last cache's onset lies at its size on huge pages, so its bracket reaches past it; the profile's
        # refine_llc_reach), each priced as a point of the largest cache, and those of one bracket past it (a
        # division of one coarse step) as a point at the reach.
        policy = "thp" if "thp" in worst else policies[0]
        octaves = float(var.get("kernels_latency_sweep_refine_octaves") or ctx.table.get("refine_octaves") or 0.125)
        rounds = min(refine, _refine_rounds(per_octave, octaves), _int(ctx.table.get("refine_rounds"), 99))
        exp.refine_rounds = rounds
        reach = float(ctx.table.get("refine_llc_reach") or 2)
        exp.refine_max_bytes = min(int(reach * host.llc), top) if host.llc else top
        cap = _int(ctx.table.get("refine_max_bytes_cap"))  # quick: the caches up to 8 MiB (an L2, a small L3)
        if cap:
            exp.refine_max_bytes = min(exp.refine_max_bytes, cap)
        past = (min(refine, max(1, math.ceil(1 / (per_octave * octaves)) - 1))
                if host.llc and exp.refine_max_bytes > host.llc else 0)
        points_s = (past * ctx.latency_point_s(exp.refine_max_bytes, policy=policy)
                    + (refine - past) * ctx.latency_point_s(min(host.llc or top, top, exp.refine_max_bytes),
                                                            policy=policy))
        exp.records += refine * ctx.kind_count
        exp.bound_s += (rounds * (PROCESS_S + REFINE_ROUND_S) + points_s) * ctx.kind_count
        exp.notes.append(f"adaptive sweep: at most {refine} refinement points in {rounds} round{'s' if rounds > 1 else ''} "
                         f"inside the rises of the {policy} curve" + (" per core kind" if ctx.kind_count > 1 else "")
                         + f", up to {_human(exp.refine_max_bytes)}"
                         + (f" ({past} priced at that size, the rest at the largest cache's)" if past
                            else ", each priced as a point of that size"))
    if per_octave < _int(var.get("kernels_latency_sweep_points_per_octave"), 1):
        exp.cuts.append(f"{per_octave} point per octave instead of "
                        f"{var.get('kernels_latency_sweep_points_per_octave')} (budget)")
    return exp


def _levels_dram(ctx: Context) -> tuple[int, int]:
    """The DRAM working set of zero_queue, write_cost and mlp: kernels_dram_bytes, or 8 x the largest
    cache and at least 256 MiB (the role's rule), within the memory cap; then the budget's cut."""
    host = ctx.host
    rule = _int(ctx.var.get("kernels_dram_bytes")) or max(
        _sweep.sweep_max_bytes(host.caches or [], host.mem_available or 1 << 40, 8, 1.0), 256 * MIB)
    rule = min(rule, ctx.max_bytes or rule)
    return _dram_bytes(ctx, rule), rule


def _cache_levels(ctx: Context) -> list[int]:
    """The working sets zero_queue and write_cost derive from sysfs (kernels/src/levels.c): half of L1,
    then the geometric midpoint of each level and the one below."""
    sizes = sorted({(_int(c.get("level")), _int(c.get("size_bytes"))) for c in ctx.host.caches})
    by_level: dict[int, int] = {}
    for level, size in sizes:
        by_level.setdefault(level, size)
    ordered = [by_level[level] for level in sorted(by_level)]
    sets = []
    for index, size in enumerate(ordered):
        sets.append(size // 2 if index == 0 else int(math.sqrt(ordered[index - 1] * size)))
    return sets


def _zero_queue(ctx: Context) -> Exp:
    exp = Exp("zero_queue")
    dram, rule = _levels_dram(ctx)
    _note_dram(ctx, exp, dram, rule, "DRAM working set")
    cost = sum(ctx.latency_point_s(size) for size in _cache_levels(ctx)) + ctx.latency_point_s(dram)
    argv = [ctx.bin, "zero_queue", "--cpu", ctx.cpu, "--dram-size", dram, *ctx.common()]
    exp.add("all points", argv, len(_cache_levels(ctx)) + 1, cost, ctx.kind_count)
    return exp


def _write_cost(ctx: Context) -> Exp:
    exp = Exp("write_cost")
    dram, rule = _levels_dram(ctx)
    _note_dram(ctx, exp, dram, rule, "DRAM working set")
    sizes = _cache_levels(ctx) + [dram]
    # read-modify-write and read-only at every level, then the flush round trip
    cost = 2 * sum(ctx.latency_point_s(size) for size in sizes) + ctx.measure_s(ctx.sample_s())
    argv = [ctx.bin, "write_cost", "--cpu", ctx.cpu, "--dram-size", dram, *ctx.common()]
    exp.add("all points", argv, 2 * len(sizes) + 1, cost, ctx.kind_count)
    return exp


def _mlp(ctx: Context) -> Exp:
    exp = Exp("mlp")
    dram, rule = _levels_dram(ctx)
    _note_dram(ctx, exp, dram, rule, "working set")
    repeats = _int(ctx.knobs.get("repeats") or ctx.var.get("kernels_mlp_repeats"), 1)
    setup = ctx.chain_setup_s(dram, dram // LINE)
    cost = setup + 16 * repeats * ctx.measure_s(ctx.sample_s(), tries=ctx.tries or 3)
    argv = [ctx.bin, "mlp", "--cpu", ctx.cpu, "--repeats", repeats, "--size", dram, *ctx.common()]
    exp.add("all points", argv, 16 * repeats, cost)
    if repeats < _int(ctx.var.get("kernels_mlp_repeats"), 1):
        exp.cuts.append(f"each chain count measured {repeats} times instead of {ctx.var.get('kernels_mlp_repeats')} "
                        "(budget)")
    return exp


def _pattern_stride(ctx: Context) -> Exp:
    exp = Exp("pattern_stride")
    var = ctx.var
    footprint = _int(var.get("kernels_pattern_stride_footprint_bytes"), 64 * MIB)
    span_cap = min(_int(ctx.table.get("span_cap_bytes"), GIB), ctx.max_bytes or GIB)
    scale = ctx.knobs.get("size_scale", 1.0)
    if scale < 1.0:
        cut = max(DRAM_FLOOR_BYTES, int(span_cap * scale)) // (2 * MIB) * (2 * MIB)
        exp.cuts.append(f"largest span cut from {_human(span_cap)} to {_human(cut)} (budget)")
        span_cap = cut
    # The seed settings (issue 31): a working-set x pattern x stride grid (one process per footprint too), and
    # companion threads chasing the same pattern and stride on buffers of their own while one is timed.
    footprints = [int(size) for size in var.get("kernels_pattern_stride_footprints") or []]
    threads = _teams.team_threads(var.get("kernels_pattern_stride_threads"), ctx.host.cpus)
    exp.notes += _teams.team_notes(var.get("kernels_pattern_stride_threads"), ctx.host.cpus,
                                   "kernels_pattern_stride_threads")
    if footprints:
        exp.notes.append(f"working-set grid: {', '.join(map(str, footprints))} B of lines touched")
    argv = [ctx.bin, "pattern_stride", "--cpu", ctx.cpu, *([] if footprints else ["--footprint", footprint]),
            *(["--threads", threads] if threads > 1 else []), *ctx.common(), "--max-bytes", span_cap]
    patterns = list(var.get("kernels_pattern_stride_patterns") or [])
    strides = [int(stride) for stride in var.get("kernels_pattern_stride_strides") or []]

    def cost(stride, lines_bytes=footprint):
        # every thread's buffer fits within the cap (the kernel gives each cap / threads); the companions
        # build their chains together before the timed thread builds its own, at every point
        span = min(lines_bytes * stride // LINE, span_cap // threads // stride * stride)
        lines = max(2, span // stride)
        companions = ctx.chain_setup_s(span, lines) * (threads - 1) / ctx.host.stream_threads(threads - 1) \
            if threads > 1 else 0.0
        return ctx.latency_point_s(span, lines) + companions

    per_thread_cap = span_cap // threads
    clamped = [(size, stride) for size in footprints or [footprint] for stride in strides
               if size * stride // LINE > per_thread_cap // stride * stride]
    if clamped:
        exp.notes.append(
            f"span capped at {_human(per_thread_cap)} per thread ({_human(span_cap)} over {threads} "
            f"thread{'s' if threads > 1 else ''}): "
            + ", ".join(f"{_human(size)} at stride {stride} touches "
                        f"{_human(per_thread_cap // stride * LINE)} of lines" for size, stride in clamped))
    if ctx.knobs.get("group"):
        for size in footprints or [footprint]:
            exp.add("all points" if not footprints else f"footprint {size}",
                    [*argv, "--patterns", ",".join(patterns), "--strides", ",".join(map(str, strides)),
                     *(["--footprint", size] if footprints else [])],
                    len(patterns) * len(strides), len(patterns) * sum(cost(stride, size) for stride in strides))
        exp.cuts.append("every pattern and stride in one process instead of one each (budget): perf stat then counts "
                        "them together")
        return exp
    axes = [{"option": "--patterns", "values": patterns}, {"option": "--strides", "values": strides}]
    if footprints:
        axes.append({"option": "--footprint", "values": footprints})
    for point in _sweep.grid_points(argv, axes):
        point_argv = point["argv"]
        size = int(point_argv[point_argv.index("--footprint") + 1]) if footprints else footprint
        exp.add(point["label"], point_argv, 1, cost(int(point_argv[point_argv.index("--strides") + 1]), size))
    return exp


def _tlb(ctx: Context) -> Exp:
    exp = Exp("tlb")
    var, table = ctx.var, ctx.table
    max_pages = dict(table.get("tlb_max_pages") or {})
    # kernels_tlb_max_pages (a seed setting, e.g. {4k: 589824}) in place of the profile's; the budget cuts it alike
    for size, count in (var.get("kernels_tlb_max_pages") or {}).items():
        if size in ("4k", "thp") and _int(count) > 0:
            max_pages[size] = _int(count)
            exp.notes.append(f"{size}: up to {_int(count)} pages (kernels_tlb_max_pages)")
    scale = ctx.knobs.get("size_scale", 1.0)
    if scale < 1.0:
        for size in ("4k", "thp"):
            if size in max_pages:
                cut = max(_int(var.get("kernels_tlb_min_pages"), 8) * 2, int(int(max_pages[size]) * scale))
                exp.cuts.append(f"{size}: up to {cut} pages instead of {max_pages[size]} (budget)")
                max_pages[size] = cut
    hugetlb = ctx.settings.get("hugetlb_pages")
    max_pages["hugetlb"] = (_int(hugetlb) - 1) if hugetlb is not None else 0
    per_octave = _int(ctx.knobs.get("per_octave") or var.get("kernels_latency_sweep_points_per_octave"), 1)
    planned = _sweep.tlb_plan([ctx.bin, "tlb", "--cpu", ctx.cpu, *ctx.common()],
                              var.get("kernels_tlb_page_sizes") or [], max_pages,
                              _int(var.get("kernels_tlb_min_pages"), 8), per_octave,
                              var.get("kernels_tlb_page_strides") or [])
    exp.notes += planned["notes"]
    if hugetlb is None and "hugetlb" in (var.get("kernels_tlb_page_sizes") or []):
        exp.notes.append("hugetlb not priced: the free 2 MiB pages are known once the host is tuned")
    page_bytes = {"4k": 4096, "thp": 2 * MIB, "hugetlb": 2 * MIB}
    worst = {}
    for point in planned["points"]:
        # a page-stride process touches one 4 KiB page per page counted, whatever the stride: priced as 4k
        size = point["argv"][point["argv"].index("--page-size") + 1]
        pages = [int(p) for p in point["argv"][point["argv"].index("--pages") + 1].split(",")]
        cost = 0.0
        for count in pages:
            span = count * page_bytes[size]
            # the tlb chain spans the pages; the control packs the same lines
            setup = span * FAULT_S_PER_BYTE + ctx.chain_setup_s(count * LINE, count) * 2
            each = setup + ctx.measure_s(ctx.sample_s(), series=2)
            worst[size] = max(worst.get(size, 0.0), each)
            cost += each
        exp.add(point["label"], point["argv"], 2 * len(pages), cost, ctx.kind_count)
    refine = _refine_bound(ctx, exp, "kernels_tlb_refine_max_points", "tlb_refine_max_points", "page counts")
    refined = [size for size in worst if size in (table.get("tlb_refine_page_sizes") or list(page_bytes))]
    exp.refine_page_sizes = refined
    if refine and exp.processes and refined:
        # The adaptive sweep's page counts (issue 28, run by tasks/run_points.yml after the coarse pass): per
        # refined curve (the profile's page sizes, and core kind) at most `refine` more, each priced as that
        # curve's costliest coarse page count; a round is the controller's tasks and one process per curve.
        rounds = min(refine, _refine_rounds(per_octave, var.get("kernels_tlb_refine_octaves")
                                            or table.get("tlb_refine_octaves")),
                     _int(table.get("tlb_refine_rounds", table.get("refine_rounds")), 99))
        exp.refine_rounds = rounds
        exp.bound_s += rounds * REFINE_ROUND_S * ctx.kind_count
        for size in refined:
            exp.records += 2 * refine * ctx.kind_count
            exp.bound_s += (rounds * PROCESS_S + refine * worst[size]) * ctx.kind_count
        exp.notes.append(f"adaptive sweep: at most {refine} refinement page counts per curve ({', '.join(refined)}) "
                         f"in {rounds} round{'s' if rounds > 1 else ''} inside the TLB steps"
                         + (" and core kind" if ctx.kind_count > 1 else "")
                         + ", priced as the curve's costliest coarse page count")
    return exp


def _c2c_pairs(host: Host) -> list[tuple[int, int]]:
    """Ordered CPU pairs that cover, with one pair each, every pair of LLC domains and every domain with
    itself (two CPUs of different cores), one pair of SMT siblings per core kind that has them, and every
    pair of core kinds."""
    topology = host.topology
    records = {record["cpu"]: record for record in topology.get("cpus") or []}
    siblings = {cpu: set(_numa._cpus(record.get("smt_siblings"))) | {cpu} for cpu, record in records.items()}
    domains = [_numa._cpus(text) for text in (topology.get("llc_domains") or [])[:C2C_MAX_DOMAINS]] \
        or [sorted(records)]

    def core_leaders(cpus):
        leaders, seen = [], set()
        for cpu in cpus:
            if not siblings.get(cpu, {cpu}) & seen:
                leaders.append(cpu)
            seen |= siblings.get(cpu, {cpu})
        return leaders

    pairs: list[tuple[int, int]] = []
    leads = [core_leaders(domain) for domain in domains]
    for first, second in itertools.combinations(range(len(domains)), 2):
        if leads[first] and leads[second]:
            pairs.append((leads[first][0], leads[second][0]))
    for lead in leads:
        if len(lead) >= 2:
            pairs.append((lead[0], lead[1]))
    kind_of = {cpu: record.get("kind") for cpu, record in records.items()}
    for kind in host.kinds:
        for cpu in _numa._cpus(kind.get("cpus")):
            others = sorted(siblings.get(cpu, {cpu}) - {cpu})
            if others:
                pairs.append((cpu, others[0]))
                break
    kinds = [kind.get("kind") for kind in host.kinds]
    for first, second in itertools.combinations_with_replacement(kinds, 2):
        if any({kind_of.get(a), kind_of.get(b)} == {first, second} for a, b in pairs):
            continue
        a_cpus = core_leaders([cpu for cpu in sorted(records) if kind_of.get(cpu) == first])
        b_cpus = [cpu for cpu in core_leaders([cpu for cpu in sorted(records) if kind_of.get(cpu) == second])
                  if cpu not in siblings.get(a_cpus[0] if a_cpus else -1, set())]
        if a_cpus and b_cpus:
            pairs.append((a_cpus[0], b_cpus[0]))
    return [pair for pair in dict.fromkeys(pairs) if pair[0] != pair[1]]


def _c2c(ctx: Context) -> Exp:
    exp = Exp("c2c")
    var, host = ctx.var, ctx.host
    min_ms = float(var.get("kernels_c2c_min_sample_ms") or ctx.table.get("c2c_min_sample_ms") or 2)
    planned = _numa.c2c_cpus_plan(host.topology, str(var["kernels_c2c_cpus"]) if var.get("kernels_c2c_cpus") else None)
    cpus = _numa._cpus(planned["cpus"]) if planned["cpus"] \
        else sorted(r["cpu"] for r in host.topology.get("cpus") or []) \
        or list(range(host.cpus))
    every = len(cpus) * (len(cpus) - 1)
    pair_s = C2C_PAIR_S + ctx.measure_s(ctx.sample_s(min_sample_ms=min_ms))
    argv = [ctx.bin, "c2c", *ctx.common(min_sample_ms=min_ms)]
    all_pairs = var.get("kernels_c2c_all_pairs")
    if all_pairs is None:
        all_pairs = bool(ctx.table.get("c2c_all_pairs")) or bool(var.get("kernels_c2c_cpus"))
    fits = ctx.knobs.get("allowance") is None or every * pair_s + len(cpus) * CORECLOCK_S + PROCESS_S + EXPERIMENT_S \
        <= ctx.knobs["allowance"]
    if all_pairs or fits:
        exp.notes += planned["notes"]
        exp.add("all points", argv + (["--cpus", planned["cpus"]] if planned["cpus"] else []), every,
                every * pair_s + len(cpus) * CORECLOCK_S)
        return exp
    pairs = _c2c_pairs(host)
    initiators = len({initiator for initiator, _target in pairs})
    exp.add("sampled pairs", argv + ["--pairs", ",".join(f"{a}:{b}" for a, b in pairs)], len(pairs),
            len(pairs) * pair_s + initiators * CORECLOCK_S)
    domains = len(host.topology.get("llc_domains") or []) or 1
    exp.cuts.append(f"{len(pairs)} of {every:,} ordered CPU pairs (budget): every pair of the {domains} LLC "
                    f"domain{'s' if domains != 1 else ''} and every domain with itself"
                    + (", SMT siblings" if host.smt else "")
                    + (f", every pair of the {len(host.kinds)} core kinds" if len(host.kinds) > 1 else "")
                    + "; kernels_c2c_all_pairs: true measures the whole matrix")
    return exp


def _numa_matrix(ctx: Context) -> Exp:
    exp = Exp("numa_matrix")
    var, host = ctx.var, ctx.host
    dram, rule = _levels_dram(ctx)
    chase = [ctx.bin, "chase", "--sizes", dram, "--page-policy", "thp", *ctx.common()]
    latency = _numa.numa_matrix_plan(host.numa, chase)
    if latency["skip"]:
        exp.skip = latency["skip"]
        exp.notes.append(latency["skip"])
        return exp
    _note_dram(ctx, exp, dram, rule, "latency matrix working set")
    bw_rule = _bandwidth_dram_rule(ctx)
    per_thread = _dram_bytes(ctx, bw_rule)
    threads = var.get("kernels_numa_bandwidth_threads") or ctx.knobs.get("numa_threads")
    bandwidth = _numa.numa_bandwidth_plan(host.numa, [ctx.bin, "bandwidth", "--ops", "read", "--isa",
                                                      var.get("kernels_bandwidth_isa", "auto"), "--page-policy", "thp",
                                                      *ctx.common()], per_thread, ctx.max_bytes, threads)
    if ctx.knobs.get("latency_only"):
        bandwidth["points"] = []
        exp.cuts.append("the bandwidth matrix left out, the latency matrix only (budget)")
    if ctx.knobs.get("numa_threads") and not var.get("kernels_numa_bandwidth_threads"):
        exp.cuts.append(f"bandwidth matrix read by the first {ctx.knobs['numa_threads']} CPUs of each node (budget)")
    exp.notes += latency["notes"] + bandwidth["notes"]
    cells = _numa_cells(host, ctx.knobs.get("numa_cells"))
    if cells is not None and len(cells) < len(latency["points"]):
        total = len(latency["points"])
        latency["points"] = [p for p in latency["points"] if _cell(p["argv"], host) in cells]
        bandwidth["points"] = [p for p in bandwidth["points"] if _cell(p["argv"], host) in cells]
        kept = {"cross": "every node local, node 0 to and from every node, and every distance the firmware lists",
                "row": "node 0 to every node, and every distance the firmware lists",
                "distances": "node 0 local and one cell for every distance the firmware lists"}[ctx.knobs["numa_cells"]]
        exp.cuts.append(f"{len(latency['points'])} of the {total} (CPU node, memory node) cells of each matrix "
                        f"(budget): {kept}")
    for point in latency["points"]:
        exp.add(point["label"], point["argv"], 1, ctx.latency_point_s(dram))
    for point in bandwidth["points"]:
        argv = point["argv"]
        team = _int(argv[argv.index("--threads") + 1], 1)
        size = _int(argv[argv.index("--sizes") + 1])
        exp.add(point["label"], argv, 1, ctx.stream_point_s(size, team))
    return exp


def _cell(argv: list, host: Host) -> tuple[int, int]:
    """(CPU node, memory node) of a NUMA matrix process."""
    argv = [str(item) for item in argv]
    memory = int(argv[argv.index("--mem-node") + 1])
    cpu = int(argv[argv.index("--cpu") + 1]) if "--cpu" in argv else int(argv[argv.index("--cpus") + 1].split(",")[0])
    for name, cpus in (host.numa.get("cpus") or {}).items():
        if cpu in _numa._cpus(cpus):
            return int(name.removeprefix("node")), memory
    return -1, memory


def _numa_cells(host: Host, shape: str | None) -> set[tuple[int, int]] | None:
    """The matrix cells a budget keeps: 'cross' every node's local cell, node 0's row and column; 'row'
    node 0's row; 'distances' node 0's local cell; each with one cell for every distance in the firmware's
    table not yet among them."""
    if shape is None:
        return None
    nodes = sorted(int(name.removeprefix("node")) for name in (host.numa.get("cpus") or {}))
    first = nodes[0] if nodes else 0
    cells = {(first, node) for node in nodes} if shape in ("cross", "row") else {(first, first)}
    if shape == "cross":
        cells |= {(node, node) for node in nodes} | {(node, first) for node in nodes}
    distances = {int(name.removeprefix("node")): row for name, row in (host.numa.get("distances") or {}).items()}
    covered = {distances.get(a, [None] * (b + 1))[b] if b < len(distances.get(a, [])) else None for a, b in cells}
    for a in nodes:
        for b in nodes:
            row = distances.get(a) or []
            if b < len(row) and row[b] not in covered:
                cells.add((a, b))
                covered.add(row[b])
    return cells


def _thread_steps(total: int, leaders: int, ratio: float | None) -> list[int]:
    """Thread counts 1..total: every count (ratio None), or every count up to 4 and then geometric steps of
    `ratio`, always with the last count that leads a core (before the SMT siblings) and total."""
    if ratio is None or total <= 4:
        return list(range(1, total + 1))
    steps = {1, 2, 3, 4, total, max(1, min(leaders, total))}
    count = 4.0
    while count < total:
        count *= ratio
        steps.add(min(total, int(round(count))))
    return sorted(steps)


def _bandwidth_dram_rule(ctx: Context) -> int:
    host = ctx.host
    wanted = max(_int(ctx.var.get("kernels_bandwidth_dram_bytes"), 256 * MIB),
                 _sweep.sweep_max_bytes(host.caches or [], host.mem_available or 1 << 40, 4, 1.0))
    return min(wanted, ctx.max_bytes or wanted) // LINE * LINE


def _bandwidth(ctx: Context) -> Exp:
    exp = Exp("bandwidth")
    var = ctx.var
    rule = _bandwidth_dram_rule(ctx)
    dram = _dram_bytes(ctx, rule) // LINE * LINE
    _note_dram(ctx, exp, dram, rule, "DRAM working set")
    per_octave = _int(ctx.knobs.get("per_octave") or var.get("kernels_bandwidth_points_per_octave"), 1)
    if per_octave < _int(var.get("kernels_bandwidth_points_per_octave"), 1):
        exp.cuts.append(f"{per_octave} working set per octave instead of "
                        f"{var.get('kernels_bandwidth_points_per_octave')} (budget)")
    sizes = _sweep.sweep_sizes(_int(var.get("kernels_bandwidth_min_bytes"), 4096), dram, per_octave)
    ops, stores = list(var.get("kernels_bandwidth_ops") or []), list(var.get("kernels_bandwidth_stores") or [])
    if ctx.knobs.get("regular_only") and len(stores) > 1 and "regular" in stores:
        exp.cuts.append(f"{', '.join(store for store in stores if store != 'regular')} stores left out: regular "
                        "stores only (budget)")
        stores = ["regular"]
    variants = sum(1 if op == "read" else len(stores) for op in ops)
    cost = sum(ctx.stream_point_s(size) for size in sizes) * variants
    argv = [ctx.bin, "bandwidth", "--cpu", ctx.cpu, "--isa", var.get("kernels_bandwidth_isa", "auto"),
            "--ops", ",".join(ops), "--stores", ",".join(stores), *ctx.common(), "--sizes", ",".join(map(str, sizes))]
    exp.add("all points", argv, len(sizes) * variants, cost, ctx.kind_count)
    exp.notes.append(f"working sets {_human(sizes[0])} .. {_human(dram)}, {len(sizes)} sizes x {variants} op/store "
                     "variants, "
                     f"one thread on CPU {ctx.cpu}")
    return exp


def _dram_team_experiment(ctx: Context, name: str, extra: list, variants: int, random=()) -> Exp:
    """stride_bandwidth, rw_mix: one thread over the DRAM size, `variants` points in one process, of
    which those in `random` (strides) read their lines in random order (latency-bound, not streamed).
    kernels_<name>_threads (a seed setting) runs a team instead, at most one thread per CPU (said in the
    notes), each thread on a DRAM-sized buffer of its own, all within the memory cap (teams.team_options)."""
    exp = Exp(name)
    variable = f"kernels_{name}_threads"
    threads = _teams.team_threads(ctx.var.get(variable), ctx.host.cpus)
    rule = _bandwidth_dram_rule(ctx)
    dram = _dram_bytes(ctx, rule) // LINE * LINE
    _note_dram(ctx, exp, dram, rule, "DRAM working set" + (" (each thread's)" if threads > 1 else ""), threads)
    placement = _teams.team_options(threads, ctx.cpu, dram, ctx.max_bytes or dram * threads)
    each = int(placement[-1])
    if threads > 1:
        argv = [ctx.bin, "bandwidth", "--isa", ctx.var.get("kernels_bandwidth_isa", "auto"), *extra, *placement,
                *ctx.common()]
    else:
        argv = [ctx.bin, "bandwidth", "--cpu", ctx.cpu, "--isa", ctx.var.get("kernels_bandwidth_isa", "auto"),
                *extra, "--sizes", dram, *ctx.common()]
    cost = (variants - len(random)) * ctx.stream_point_s(each, threads)
    for stride in random:
        # the threads walk their own buffers side by side: a round is one thread's lines
        round_s = each // max(LINE, int(stride)) * RANDOM_LINE_S
        cost += each * threads * FAULT_S_PER_BYTE / ctx.host.stream_threads(threads) \
            + ctx.measure_s(ctx.sample_s(round_s), round_s=round_s)
    exp.add("all points", argv, variants, cost)
    exp.notes += _teams.team_notes(ctx.var.get(variable), ctx.host.cpus, variable)
    return exp


def _stride_bandwidth(ctx: Context) -> Exp:
    var = ctx.var
    patterns = list(var.get("kernels_stride_bandwidth_patterns") or [])
    strides = list(var.get("kernels_stride_bandwidth_strides") or [])
    exp = _dram_team_experiment(ctx, "stride_bandwidth", ["--ops", "read", "--patterns", ",".join(patterns),
                                                          "--strides", ",".join(map(str, strides))],
                                len(patterns) * len(strides), strides if "random" in patterns else ())
    argv = exp.processes[0]["argv"]
    exp.notes.insert(0, f"read bandwidth over a {argv[argv.index('--sizes') + 1]} B span"
                     + (" (per thread)" if "--threads" in argv else "") + "; each stride block moves one 64 B line")
    return exp


def _rw_mix(ctx: Context) -> Exp:
    var = ctx.var
    mixes, stores = list(var.get("kernels_rw_mix_mixes") or []), list(var.get("kernels_rw_mix_stores") or [])
    variants = sum(1 if str(mix).split("/")[1] == "0" else len(stores) for mix in mixes)
    return _dram_team_experiment(ctx, "rw_mix", ["--ops", "none", "--mixes", ",".join(map(str, mixes)),
                                                 "--stores", ",".join(stores)], variants)


def _thread_sweep(ctx: Context) -> Exp:
    exp = Exp("thread_sweep")
    var, host = ctx.var, ctx.host
    total = _int(var.get("kernels_thread_sweep_max_threads")) or host.cpus
    order = _kinds.core_kind_cpu_order(host.topology) if var.get("kernels_per_core_kind", True) else {}
    leaders = order.get("leaders") or host.cores
    steps = _thread_steps(total, leaders, ctx.knobs.get("thread_ratio"))
    if len(steps) < total:
        exp.cuts.append(f"{len(steps)} of {total} thread counts (budget): every count to 4, then steps of "
                        f"x{ctx.knobs['thread_ratio']:.3g}, "
                        + (f"with {min(leaders, total)} (one thread per core) and {total}" if leaders < total
                           else f"with {total} (one thread per core)"))
    rule = min(_bandwidth_dram_rule(ctx), (ctx.max_bytes or 1 << 40) // total // LINE * LINE)
    per_thread = _dram_bytes(ctx, rule, threads=total) // LINE * LINE
    _note_dram(ctx, exp, per_thread, rule, "each thread's buffer", threads=total)
    ops = list(var.get("kernels_thread_sweep_ops") or [])
    cost = sum(ctx.stream_point_s(per_thread, threads) for threads in steps) * len(ops)
    argv = [ctx.bin, "bandwidth", "--isa", var.get("kernels_bandwidth_isa", "auto"), "--ops", ",".join(ops),
            "--stores", "regular", "--threads", ",".join(map(str, steps)), "--sizes", per_thread,
            *(["--cpus", order["cpus"]] if order else []), *ctx.common()]
    exp.add("all points", argv, len(steps) * len(ops), cost)
    exp.notes.append(f"threads {', '.join(map(str, steps))} in the kernel's CPU order (one per physical core, then SMT "
                     "siblings; records name the CPUs), each on its own buffer")
    exp.notes += _kinds.core_kind_order_note(order)
    return exp


def _loaded_latency(ctx: Context) -> Exp:
    exp = Exp("loaded_latency")
    var, host = ctx.var, ctx.host
    loaders = max(1, host.cpus - 1)
    rule = min(_bandwidth_dram_rule(ctx), (ctx.max_bytes or 1 << 40) // max(host.cpus, 2) // LINE * LINE)
    size = _dram_bytes(ctx, rule) // LINE * LINE
    load_size = _dram_bytes(ctx, rule, threads=loaders) // LINE * LINE
    _note_dram(ctx, exp, size, rule, "the chase's working set")
    if load_size < size:
        exp.cuts.append(f"each load thread's buffer {_human(load_size)} instead of {_human(rule)} (budget; "
                        f"{loaders} load threads, {_human(load_size * loaders)} together)")
    traffic = list(var.get("kernels_loaded_latency_traffic") or [])
    delays = list(ctx.knobs.get("delays") or var.get("kernels_loaded_latency_delays") or [])
    if len(delays) < len(var.get("kernels_loaded_latency_delays") or []):
        exp.cuts.append(f"{len(delays)} of {len(var['kernels_loaded_latency_delays'])} delays "
                        f"({', '.join(map(str, delays))}) (budget)")
    setup = ctx.chain_setup_s(size, size // LINE) \
        + loaders * load_size * FAULT_S_PER_BYTE / host.stream_threads(loaders) \
        + loaders * load_size / (STREAM_BYTES_PER_S * host.stream_threads(loaders))
    cost = setup + (1 + len(traffic) * len(delays)) * ctx.measure_s(ctx.sample_s())
    argv = [ctx.bin, "loaded_latency", "--chase-cpu", ctx.cpu, "--isa", var.get("kernels_bandwidth_isa", "auto"),
            "--traffic", ",".join(map(str, traffic)), "--delays", ",".join(map(str, delays)),
            "--stores", var.get("kernels_loaded_latency_stores", "regular"), "--size", size, "--load-size", load_size,
            *ctx.common()]
    exp.add("all points", argv, 1 + len(traffic) * len(delays), cost)
    exp.notes.append(f"chase on CPU {ctx.cpu}, load threads on every other CPU; delays in spin "
                     "iterations after each group of lines")
    if host.cpus < 2:
        exp.notes.append("this host has one CPU: no load thread can run beside the chase, so only the idle point is "
                         "measured")
    return exp


def _saxpy(ctx: Context) -> Exp:
    exp = Exp("saxpy")
    var = ctx.var
    rule = min(_int(var.get("kernels_saxpy_bytes"), 256 * MIB), ctx.max_bytes or 1 << 40)
    size = _dram_bytes(ctx, rule)
    _note_dram(ctx, exp, size, rule, "arrays (both together)")
    updates = size // 16
    # kernels_saxpy_threads (a seed setting): a team sweeping slices of whole lines, at most one thread per CPU
    # (said in the notes); it spans the core kinds, so it runs once (core_kinds.core_kind_points)
    threads = _teams.team_threads(var.get("kernels_saxpy_threads"), ctx.host.cpus)
    exp.notes += _teams.team_notes(var.get("kernels_saxpy_threads"), ctx.host.cpus, "kernels_saxpy_threads")
    placement = ["--threads", threads] if threads > 1 else ["--cpu", ctx.cpu]
    kinds = 1 if threads > 1 else ctx.kind_count
    argv = [ctx.bin, "saxpy", *placement, "--size", size, *ctx.common()]
    strides = [int(stride) for stride in var.get("kernels_saxpy_strides") or []]

    def cost(stride):
        # priced as one thread's pass: a team splits the same updates, so this stays an upper bound
        pass_s = updates * (SAXPY_HIT_S + min(1.0, stride / 8) * SAXPY_MISS_S)
        return size * FAULT_S_PER_BYTE + size / STREAM_BYTES_PER_S + ctx.measure_s(ctx.sample_s(pass_s), round_s=pass_s)

    if ctx.knobs.get("group"):
        exp.add("all points", [*argv, "--strides", ",".join(map(str, strides))], len(strides),
                sum(cost(stride) for stride in strides), kinds)
        exp.cuts.append("every stride in one process instead of one each (budget; perf counts nothing on this "
                        "host, so nothing is lost)")
        return exp
    for point in _sweep.grid_points(argv, [{"option": "--strides", "values": strides}]):
        exp.add(point["label"], point["argv"], 1, cost(int(point["argv"][-1])), kinds)
    return exp


def _prefetch(ctx: Context) -> Exp:
    exp = Exp("prefetch")
    var = ctx.var
    rule = _bandwidth_dram_rule(ctx)
    dram = _dram_bytes(ctx, rule) // LINE * LINE
    _note_dram(ctx, exp, dram, rule, "working set")
    argv = [ctx.bin, "bandwidth", "--cpu", ctx.cpu, "--isa", var.get("kernels_bandwidth_isa", "auto"),
            "--ops", "read", "--prefetch", "none,software",
            "--prefetch-distance", var.get("kernels_prefetch_distance_blocks", 16),
            "--sizes", dram, *ctx.common(), "--hw-prefetchers", "default"]
    runs = 2 if var.get("kernels_prefetch_msr_toggle") else 1
    strides = [{"option": "--strides", "values": var.get("kernels_prefetch_strides") or []}]
    for point in _sweep.grid_points(argv, strides):
        stride = int(point["argv"][-1])
        # a strided read moves one line per stride block: the pass is the lines, not the span
        point_s = ctx.stream_point_s(dram, passes=LINE / max(LINE, stride) + 0.1)
        exp.add(point["label"], point["argv"], 2 * runs, runs * 2 * point_s)
    if runs == 2:
        exp.notes.append("priced with the opt-in run with the hardware prefetchers off (prefetch_hw_off)")
    return exp


def _thread_buffer(ctx: Context, threads: int) -> tuple[int, int]:
    host = ctx.host
    rule = min(_int(ctx.var.get("kernels_thread_buffer_bytes")) or max(
        _sweep.sweep_max_bytes(host.caches or [], host.mem_available or 1 << 40, 4, 1.0), 64 * MIB),
        (ctx.max_bytes or 1 << 40) // max(host.cpus, 2) // LINE * LINE)
    return _dram_bytes(ctx, rule, threads=threads) // LINE * LINE, rule


def _window_point_s(ctx: Context, window_ms: float, threads: int, buffer: int) -> float:
    """A thread-team run (affinity, smt): threads started and their buffers touched, then windows."""
    parallel = ctx.host.stream_threads(threads)
    setup = threads * buffer * FAULT_S_PER_BYTE / parallel + threads * buffer / (STREAM_BYTES_PER_S * parallel)
    return setup + ctx.measure_s(ctx.sample_s(min_sample_ms=window_ms))


def _affinity(ctx: Context) -> Exp:
    exp = Exp("affinity")
    var, host = ctx.var, ctx.host
    threads = _int(var.get("kernels_affinity_threads")) or host.cores
    buffer, rule = _thread_buffer(ctx, threads)
    _note_dram(ctx, exp, buffer, rule, "each memory thread's buffer", threads=threads)
    repeats = _int(ctx.knobs.get("repeats") or var.get("kernels_affinity_repeats"), 1)
    if repeats < _int(var.get("kernels_affinity_repeats"), 1):
        exp.cuts.append(f"{repeats} runs of every placement and workload instead of "
                        f"{var.get('kernels_affinity_repeats')} (budget)")
    window = float(var.get("kernels_thread_window_ms") or ctx.table.get("thread_window_ms") or 100)
    order = _kinds.core_kind_cpu_order(host.topology) if var.get("kernels_per_core_kind", True) else {}
    argv = [ctx.bin, "affinity", "--repeats", repeats, "--buffer-bytes", buffer, *ctx.common(min_sample_ms=window),
            *(["--threads", var["kernels_affinity_threads"]] if var.get("kernels_affinity_threads") else []),
            *(["--cpus", order["cores"]] if order else [])]
    placements = list(var.get("kernels_affinity_placements") or [])
    workloads = list(var.get("kernels_affinity_workloads") or [])

    def run_s(workload):
        return repeats * _window_point_s(ctx, window, threads, buffer if workload == "memory" else 0)

    if ctx.knobs.get("group"):
        exp.add("all points", [*argv, "--placements", ",".join(placements), "--workloads", ",".join(workloads)],
                repeats * threads * len(placements) * len(workloads), len(placements) * sum(map(run_s, workloads)))
        exp.cuts.append("every placement and workload in one process instead of one each (budget)")
    else:
        for point in _sweep.grid_points(argv, [{"option": "--placements", "values": placements},
                                               {"option": "--workloads", "values": workloads}]):
            exp.add(point["label"], point["argv"], repeats * threads, run_s(point["argv"][-1]))
    exp.notes += _kinds.core_kind_order_note(order, cores_only=True)
    return exp


def _smt(ctx: Context) -> Exp:
    exp = Exp("smt")
    var, host = ctx.var, ctx.host
    if not host.smt:
        exp.skip = "no SMT siblings in the facts' topology: nothing shares a core"
        exp.bound_s += PROCESS_S  # the role still asks the kernel where it would place its threads (smt --plan)
        return exp
    buffer, rule = _thread_buffer(ctx, 2)
    _note_dram(ctx, exp, buffer, rule, "each memory thread's buffer", threads=2)
    repeats = _int(ctx.knobs.get("repeats") or var.get("kernels_smt_repeats"), 1)
    if repeats < _int(var.get("kernels_smt_repeats"), 1):
        exp.cuts.append(f"{repeats} runs of every placement and workload instead of "
                        f"{var.get('kernels_smt_repeats')} (budget)")
    window = float(var.get("kernels_thread_window_ms") or ctx.table.get("thread_window_ms") or 100)
    workloads = list(var.get("kernels_smt_workloads") or [])
    order = _kinds.core_kind_cpu_order(host.topology) if var.get("kernels_per_core_kind", True) else {}
    argv = [ctx.bin, "smt", "--repeats", repeats, "--workloads", ",".join(workloads), "--buffer-bytes", buffer,
            *(["--cpus", order["cpus"]] if order else []), *ctx.common(min_sample_ms=window)]
    # alone (1 thread), SMT siblings (2), two cores (2): a record per thread
    cost = repeats * sum(_window_point_s(ctx, window, threads, buffer if workload == "memory" else 0)
                         for threads in (1, 2, 2) for workload in workloads)
    exp.add("all points", argv, repeats * len(workloads) * 5, cost)
    return exp


def _aio(ctx: Context) -> Exp:
    exp = Exp("aio")
    var = ctx.var
    paths = ctx.settings.get("paths") or {}
    window = float(var.get("kernels_aio_window_ms") or ctx.table.get("aio_window_ms") or 100)
    size = _int(var.get("kernels_aio_size_bytes"), 128 * MIB)
    depths = list(var.get("kernels_aio_queue_depths") or [])
    if ctx.knobs.get("size_scale", 1.0) < 1.0:
        cut = max(32 * MIB, int(size * ctx.knobs["size_scale"])) // MIB * MIB
        if cut < size:
            exp.cuts.append(f"scratch file {_human(cut)} instead of {_human(size)} (budget)")
            size = cut
    if ctx.knobs.get("depths") and len(depths) > ctx.knobs["depths"]:
        count = ctx.knobs["depths"]
        kept = sorted({depths[round(i * (len(depths) - 1) / (count - 1))] for i in range(count)})
        exp.cuts.append(f"queue depths {', '.join(map(str, kept))} of {', '.join(map(str, depths))} (budget)")
        depths = kept
    argv = [ctx.bin, "aio", "--directory", paths.get("aio_directory", "aio"), "--size", size,
            "--queue-depths", ",".join(map(str, depths)), "--block-size", var.get("kernels_aio_block_size", 4096),
            "--direct", var.get("kernels_aio_direct", "auto"), "--pattern", var.get("kernels_aio_pattern", "random"),
            *ctx.common(min_sample_ms=window)]
    # a window is a fixed length of time, not calibrated
    window_s = window / 1000.0
    cost = size / AIO_WRITE_BYTES_PER_S + len(depths) * (window_s + ctx.sampling_s(window_s))
    engines = list(var.get("kernels_aio_engines") or [])
    if ctx.knobs.get("group"):
        exp.add("all points", [*argv, "--engines", ",".join(engines)], len(depths) * len(engines), cost * len(engines))
        exp.cuts.append("every engine in one process instead of one each (budget)")
    else:
        for point in _sweep.grid_points(argv, [{"option": "--engines", "values": engines}]):
            exp.add(point["label"], point["argv"], len(depths), cost)
    exp.bound_s += 3 * PROCESS_S  # its scratch directory, the engine probe (aio --plan) and df
    exp.notes.append("priced with every requested engine and the whole scratch file: the host may run fewer or a "
                     "smaller file (its notes say why)")
    return exp


def _compute_classes(ctx: Context, name: str) -> tuple[list, int]:
    """An experiment's --classes and how many classes the price counts (auto: the most any build runs)."""
    classes = [str(item) for item in ctx.var.get(f"kernels_{name}_classes") or ["auto"]]
    count = COMPUTE_AUTO_CLASSES if "auto" in classes else len(dict.fromkeys(classes))
    return classes, count


def _compute_common(ctx: Context) -> tuple[list, int, float]:
    """core_clock's and peak_flops' own options: a fixed number of windows of a fixed length whatever the
    profile's precision (no --target-ci), fewer windows where the budget cuts them."""
    windows = _int(ctx.var.get("kernels_compute_windows"), _int(ctx.table.get("compute_windows"), 5))
    if ctx.knobs.get("windows"):
        windows = min(windows, ctx.knobs["windows"])
    window_ms = float(ctx.var.get("kernels_compute_window_ms") or ctx.table.get("compute_window_ms") or 20)
    argv = ["--experiment", ctx.experiment, "--samples", windows, "--min-sample-ms", f"{window_ms:g}",
            "--max-bytes", ctx.max_bytes, "--output", f"{ctx.bundle}/results/{ctx.experiment}.jsonl"]
    return argv, windows, window_ms


def _compute_cut(ctx: Context, exp: Exp, windows: int) -> None:
    natural = _int(ctx.var.get("kernels_compute_windows"), _int(ctx.table.get("compute_windows"), 5))
    if windows < natural:
        exp.cuts.append(f"{windows} windows per point instead of {natural} (budget)")


def _core_clock(ctx: Context) -> Exp:
    exp = Exp("core_clock")
    var, host = ctx.var, ctx.host
    order = _kinds.core_kind_cpu_order(host.topology) if var.get("kernels_per_core_kind", True) else {}
    classes, class_count = _compute_classes(ctx, "core_clock")
    common, windows, window_ms = _compute_common(ctx)
    natural_ramps = _int(var.get("kernels_core_clock_ramp_repeats"), _int(ctx.table.get("clock_ramp_repeats"), 1))
    ramps = min(natural_ramps, _int(ctx.knobs.get("ramps"), natural_ramps))
    idle_ms = float(var.get("kernels_core_clock_idle_ms") or 200)
    ramp_ms = float(var.get("kernels_core_clock_ramp_ms") or 100)
    if order:
        active = _kinds.active_core_steps(order)
    else:  # the kernel's own steps over one CPU per physical core: 1, 2, 4 ... and all
        active = sorted({2 ** exponent for exponent in range(host.cores.bit_length()) if 2 ** exponent < host.cores}
                        | {host.cores})
    argv = [ctx.bin, "core_clock", "--classes", ",".join(classes), "--ramp-repeats", ramps,
            "--idle-ms", var.get("kernels_core_clock_idle_ms", 200),
            "--ramp-ms", var.get("kernels_core_clock_ramp_ms", 100),
            "--slice-us", var.get("kernels_core_clock_slice_us", 200),
            *(["--cpus", order["cores"], "--active", ",".join(map(str, active))] if order else []), *common]
    points = class_count * len(active)
    cost = points * ((windows + 1) * window_ms / 1000.0 + COMPUTE_POINT_S) + ramps * (idle_ms + ramp_ms) / 1000.0
    exp.add("all points", argv, points + ramps, cost)
    exp.notes.append("one thread per physical core, " + ", ".join(map(str, active)) + " cores active"
                     + (", a step at each core-kind boundary" if order else "")
                     + f"; clocks are adds per ns of CPU time of each thread, {windows} windows of {window_ms:g} ms "
                       "per point")
    if "auto" in classes:
        exp.notes.append(f"priced with {COMPUTE_AUTO_CLASSES} instruction classes, the most auto runs on any CPU")
    exp.notes += _kinds.core_kind_order_note(order, cores_only=True)
    _compute_cut(ctx, exp, windows)
    if ramps < natural_ramps:
        exp.cuts.append(f"{ramps} ramp{'s' if ramps != 1 else ''} from idle instead of {natural_ramps} (budget)")
    return exp


def _peak_flops(ctx: Context) -> Exp:
    exp = Exp("peak_flops")
    var, host = ctx.var, ctx.host
    order = _kinds.core_kind_cpu_order(host.topology) if var.get("kernels_per_core_kind", True) else {}
    classes, class_count = _compute_classes(ctx, "peak_flops")
    precisions = [str(item) for item in var.get("kernels_peak_flops_precisions") or ["fp64", "fp32"]]
    common, windows, window_ms = _compute_common(ctx)
    threads = _kinds.active_core_steps(order, fastest_kind_only=True) if order else sorted({1, host.cores})
    argv = [ctx.bin, "peak_flops", "--classes", ",".join(classes), "--precisions", ",".join(precisions),
            *(["--cpus", order["cores"], "--threads", ",".join(map(str, threads))] if order else []), *common]
    points = class_count * len(dict.fromkeys(precisions)) * len(threads)
    # window pairs: the multiply-adds, then the clock under them; one warm-up pair
    cost = points * (2 * (windows + 1) * window_ms / 1000.0 + COMPUTE_POINT_S)
    exp.add("all points", argv, points, cost)
    exp.notes.append("one thread per physical core: one core" + (", the cores of the fastest kind" if order else "")
                     + f" and all cores; {windows} window pairs (multiply-adds, then the clock under them) of "
                       f"{window_ms:g} ms per point")
    if "auto" in classes:
        exp.notes.append(f"priced with {COMPUTE_AUTO_CLASSES} instruction classes, the most auto runs on any CPU")
    exp.notes += _kinds.core_kind_order_note(order, cores_only=True)
    _compute_cut(ctx, exp, windows)
    return exp


_PLANNERS = {
    "latency_sweep": _latency_sweep, "zero_queue": _zero_queue, "pattern_stride": _pattern_stride, "tlb": _tlb,
    "mlp": _mlp, "write_cost": _write_cost, "c2c": _c2c, "numa_matrix": _numa_matrix, "affinity": _affinity,
    "smt": _smt, "aio": _aio, "bandwidth": _bandwidth, "stride_bandwidth": _stride_bandwidth, "rw_mix": _rw_mix,
    "thread_sweep": _thread_sweep, "loaded_latency": _loaded_latency, "saxpy": _saxpy, "prefetch": _prefetch,
    "core_clock": _core_clock, "peak_flops": _peak_flops,
}

# The experiments that take a fixed number of windows per point whatever the profile's precision.
FIXED_WINDOWS = {"core_clock", "peak_flops"}

# What the budget cuts, in order, per experiment: each step sets knobs of its planner (the planner says
# in its notes what that changed). Cutting the time cap comes first everywhere: it costs precision only
# where a point does not reach its target sooner.
_HALVINGS = [0.5, 0.25, 0.125, 0.0625, 0.03125]


def _steps(name: str, settings: dict, host: Host) -> list[dict]:  # noqa: C901 - one branch per experiment
    var = settings.get("variables") or {}
    # One process per saxpy stride, or per affinity placement and workload, exists so that perf counts each
    # alone (views saxpy_counters, affinity_summary): worth its start-up wherever perf counts anything.
    counted = (host.facts.get("perf") or {}).get("capability") in ("hardware", "software") \
        and var.get("kernels_perf_stat", True)
    caps = [{"cap_scale": scale} for scale in (0.75, 0.5, 0.35, 0.25)]
    sizes = [{"size_scale": scale} for scale in _HALVINGS]
    drams = [{"dram_scale": scale} for scale in _HALVINGS]
    group = [{"group": True}]
    # an adaptive sweep's refinement points are halved only after these and one try a point (_refine_steps)
    if name == "latency_sweep":
        return group + caps + [{"per_octave": 1}] + sizes
    if name == "tlb":
        return caps + [{"per_octave": 1}] + sizes
    if name == "bandwidth":
        return caps + [{"per_octave": 1}] + drams + [{"regular_only": True}]
    if name == "saxpy":
        return ([] if counted else group) + caps + drams
    if name in ("zero_queue", "write_cost", "stride_bandwidth", "rw_mix", "prefetch"):
        return caps + drams
    if name == "mlp":
        return caps + [{"repeats": 1}] + drams
    if name == "pattern_stride":
        return group + caps + sizes
    if name == "numa_matrix":
        return caps + [{"numa_cells": "cross"}, {"numa_threads": 4}, {"numa_threads": 2}, {"numa_threads": 1}] \
            + drams[:2] + [{"numa_cells": "row"}, {"numa_cells": "distances"}] + drams[2:] + [{"latency_only": True}]
    if name == "thread_sweep":
        return caps + [{"thread_ratio": 2 ** 0.5}, {"thread_ratio": 2.0}] + drams + [{"thread_ratio": 4.0}]
    if name == "loaded_latency":
        # Fewer delays: the smallest half and the largest. Bandwidth falls as 1 / (delay + a line's own time), so the
        # small delays spread the curve from saturation down, where its knee lies, while the large ones all load
        # memory lightly (the idle point, measured anyway, is the curve's other end). Every other delay of quick's
        # ladder kept 0, 200, 1000, 5000 and 20000: on a 2-vCPU guest one point at 29.7 GB/s and four under 1 GB/s.
        delays = list(var.get("kernels_loaded_latency_delays") or [])
        ranked = sorted(delays)
        kept = set(ranked[:(len(ranked) + 1) // 2] + ranked[-1:])
        fewer = [{"delays": [delay for delay in delays if delay in kept]}] if len(delays) > 4 else []
        return caps + drams + fewer
    if name == "affinity":  # one process per placement and workload: perf counts each (view affinity_summary)
        return ([] if counted else group) + caps + [{"repeats": 1}] + drams
    if name == "smt":
        return caps + [{"repeats": 1}] + drams
    if name == "c2c":
        return caps + [{"cap_scale": 0.125}]
    if name == "aio":
        return caps + [{"size_scale": 0.5}, {"size_scale": 0.25}, {"group": True}, {"depths": 3}, {"depths": 2}]
    if name == "core_clock":  # no time cap to cut: fewer ramps from idle, then fewer windows (never under 3)
        return [{"ramps": 1}, {"windows": 3}]
    if name == "peak_flops":
        return [{"windows": 3}]
    return caps


# The experiments whose points go through the latency engine's tries (kernels/src/latency.c).
TRIED = {"latency_sweep", "zero_queue", "pattern_stride", "mlp", "write_cost", "numa_matrix"}


def _last_steps(name: str, settings: dict) -> list[dict]:
    """Cuts an experiment may take last, where the profile samples a fixed count (quick): one try of an
    unsettled latency point (its noise is flagged, not measured away), then three samples a point."""
    table = settings.get("table") or {}
    if name in FIXED_WINDOWS or (settings.get("variables") or {}).get("kernels_target_ci", table.get("target_ci")):
        return []
    return ([{"tries": 1}] if name in TRIED else []) + [{"samples": 3}]


# The adaptive sweeps' refinement points (issue 28) are what the sizes are read from: halved, then quartered, only
# after the coarse pass's density, working sets and one try a point, before three samples a point, and dropped as
# the very last cut (the coarse pass alone still reads a bracket per level).
_REFINED = {"latency_sweep", "tlb"}


def _refine_steps(name: str, last: list[dict]) -> list[dict]:
    if name not in _REFINED:
        return last
    tries = [step for step in last if "tries" in step]
    rest = [step for step in last if "tries" not in step]
    return tries + [{"refine_scale": 0.5}, {"refine_scale": 0.25}] + rest + [{"refine_scale": 0.0}]


CAP_FILL_ROUNDS = 8


def _fill_cap(name: str, host: Host, settings: dict, allowance: float, exp: Exp, knobs: dict) -> tuple[Exp, dict]:
    """The cuts come in steps (a cap of 0.75, 0.5, 0.35, 0.25 of the natural one, then density...): the step that
    fits can leave much of the allowance unspent, time that would have bought precision (the standard run of
    issue 29 stopped 270 of 394 points at caps cut to 0.5-1.5 s with 119 s of its 900 s budget unpriced). Where
    the time cap was cut, it is raised again (never past the natural cap) as far as the allowance holds, by
    bisection: the price grows with the cap, whatever the other cuts kept."""
    low = knobs.get("cap_scale")
    if low is None or low >= 1.0 or not Context(host, settings, name, knobs).target:
        return exp, knobs
    natural_knobs = {key: value for key, value in knobs.items() if key != "cap_scale"}
    natural = _PLANNERS[name](Context(host, settings, name, natural_knobs))
    if natural.record()["bound_s"] <= allowance:  # a later cut (density, sizes) made room for the whole cap
        return natural, natural_knobs
    high = 1.0
    for _round in range(CAP_FILL_ROUNDS):
        middle = (low + high) / 2
        trial_knobs = {**knobs, "cap_scale": middle}
        trial = _PLANNERS[name](Context(host, settings, name, trial_knobs))
        if trial.record()["bound_s"] <= allowance:
            low, exp, knobs = middle, trial, trial_knobs
        else:
            high = middle
    return exp, knobs


def _fit(name: str, host: Host, settings: dict, allowance: float | None) -> Exp:
    """The experiment's plan at its natural settings, cut step by step until its price fits the allowance
    (knobs accumulate: a later step keeps the earlier ones). Without an allowance (full) nothing is cut."""
    knobs: dict = {"allowance": allowance}
    exp = _PLANNERS[name](Context(host, settings, name, knobs))
    if allowance is not None:
        kinds = [{"one_kind": True}] if Context(host, settings, name, {}).kind_count > 1 else []
        for step in _steps(name, settings, host) + kinds + _refine_steps(name, _last_steps(name, settings)):
            if exp.record()["bound_s"] <= allowance:
                break
            knobs = {**knobs, **step}
            exp = _PLANNERS[name](Context(host, settings, name, knobs))
        if exp.record()["bound_s"] > allowance:
            exp.cuts.append(f"over its allowance of {_seconds(allowance)} even with every cut the budget may make")
        else:
            exp, knobs = _fill_cap(name, host, settings, allowance, exp, knobs)
    ctx = Context(host, settings, name, knobs)
    exp.knobs = knobs  # what the fit cut (tests; the record says it in words)
    exp.target_rel, exp.cap_s, exp.kinds = ctx.target, ctx.cap, ctx.kind_count
    exp.allowance_s = None if allowance is None else round(allowance, 1)
    if knobs.get("one_kind") and Context(host, settings, name, {}).kind_count > 1 \
            and any("--cpu" in process["argv"] for process in exp.processes):  # a team spans the kinds anyway
        exp.cuts.append(f"measured on the {host.kinds[0].get('kind')} only (CPU {ctx.cpu}), not once per core kind "
                        "(budget); the standard profile measures every kind")
    natural_cap = Context(host, settings, name, {}).cap
    if ctx.cap is not None and natural_cap and ctx.cap < natural_cap:
        exp.cuts.insert(0, f"time cap per point {ctx.cap:g} s instead of {natural_cap:g} s (budget)")
    natural = Context(host, settings, name, {})
    if knobs.get("tries"):
        exp.cuts.append(f"one try per latency point instead of {natural.tries or 3} (budget): an unsettled point is "
                        "flagged as such, not measured again")
    if knobs.get("samples"):
        exp.cuts.append(f"{ctx.samples} samples per point instead of {natural.samples} (budget)")
    return exp


def _spend_leftover(host: Host, settings: dict, fitted: dict, given: dict) -> dict:
    """What the selected experiments left of their allowances (a host without SMT or a second NUMA node
    skips those; others fit with room to spare) goes to the experiments the budget cut, in proportion to
    their allowance, on top of what each spends now, and they are fitted again. A refit never spends more
    than it was given (or, where even every cut cannot fit, what it spent before), so the total stays
    within the sum of the selected experiments' allowances."""
    total = sum(value for value in given.values() if value is not None)
    for _round in range(2):
        spent = {name: exp.record()["bound_s"] for name, exp in fitted.items()}
        pool = total - sum(spent.values())
        needy = [name for name, exp in fitted.items() if given[name] is not None and exp.cuts]
        if pool <= 0.5 or not needy:
            break
        weights = sum(given[name] for name in needy)
        trial = dict(fitted)
        for name in needy:
            trial[name] = _fit(name, host, settings, spent[name] + pool * given[name] / weights)
        if sum(exp.record()["bound_s"] for exp in trial.values()) > total:
            break
        fitted = trial
    return fitted


def _yield_refinement(host: Host, settings: dict, fitted: dict, room: float) -> dict:
    """Where experiments that no cut fits into their allowance push the total past the budget (`room`: the
    budget less what storage takes), the adaptive sweeps' refinement gives way first, latency sweep then tlb: each
    is fitted again into what it spends less the excess (the coarse pass alone still reads a bracket per level)."""
    excess = sum(exp.record()["bound_s"] for exp in fitted.values()) - room
    for name in ("tlb", "latency_sweep"):
        if excess <= 0 or name not in fitted or not fitted[name].refine_max_points:
            continue
        before = fitted[name].record()["bound_s"]
        fitted = {**fitted, name: _fit(name, host, settings, max(0.0, before - excess))}
        excess -= before - fitted[name].record()["bound_s"]
    return fitted


# What a plan record says of an adaptive sweep's refinement, beside its coarse processes (the kernels role's rounds).
REFINE_KEYS = ("refine_max_points", "refine_max_bytes", "refine_page_sizes", "refine_rounds")


def _plain(value):
    """`value` as plain dicts and lists, each of its values read once. Under Ansible a filter's arguments are
    lazy containers that template a value each time it is read: the planners read the settings (whose
    `variables` are some hundred templates) and the facts over and over, and those reads took some 80% of a
    plan's CPU on the controller, 0.2-0.3 s a host each time the plan is made."""
    if isinstance(value, Mapping):
        return {key: _plain(member) for key, member in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(member) for member in value]
    return value


# host_plan's settings: those that stay the same through a run (the profile, its row, the kernels_* variables, the
# experiments tagged and enabled, fio's price: its own variables alone), kept in the plan as `inputs`, and those of
# the host's situation when it is planned. MLC's and the workloads' prices (`priced`) also read the host's facts:
# they are kept too, with those facts (price_facts), and taken again only where the facts they read are the same.
INPUT_KEYS = ("profile", "table", "variables", "selected", "enabled", "experiments", "tagged", "storage")
SITUATION_KEYS = ("paths", "hugetlb_pages", "priced")

# The kernels_* variables whose default is a column of the profile's row (__kernels_profiles): the role leaves
# them unset, and the plan takes the row's value for each the user did not set (null included: a null
# kernels_target_ci is a fixed kernels_samples). As defaults they were templates, each compiled with the row's
# on every host for every plan (Ansible 2.19 compiles a template each time it renders one): 51 of the preflight
# plan's 109 compiles; with the switches (enabled_experiments) 70, some 0.08 s of the controller's CPU a host.
PROFILE_VARIABLES = {
    "kernels_samples": "samples", "kernels_min_sample_ms": "min_sample_ms", "kernels_target_ci": "target_ci",
    "kernels_max_point_s": "max_point_s", "kernels_precision": "precision",
    "kernels_latency_sweep_points_per_octave": "points_per_octave",
    "kernels_latency_sweep_refine_octaves": "refine_octaves",
    "kernels_latency_sweep_refine_max_points": "refine_max_points",
    "kernels_pattern_stride_footprint_bytes": "footprint_bytes",
    "kernels_tlb_refine_octaves": "tlb_refine_octaves", "kernels_tlb_refine_max_points": "tlb_refine_max_points",
    "kernels_mlp_repeats": "repeats", "kernels_c2c_min_sample_ms": "c2c_min_sample_ms",
    "kernels_affinity_repeats": "thread_repeats", "kernels_smt_repeats": "thread_repeats",
    "kernels_thread_window_ms": "thread_window_ms", "kernels_aio_size_bytes": "aio_size_bytes",
    "kernels_aio_window_ms": "aio_window_ms", "kernels_compute_windows": "compute_windows",
    "kernels_compute_window_ms": "compute_window_ms", "kernels_core_clock_ramp_repeats": "clock_ramp_repeats",
    "kernels_bandwidth_dram_bytes": "bandwidth_dram_bytes",
    "kernels_bandwidth_points_per_octave": "bandwidth_points_per_octave",
    "kernels_loaded_latency_delays": "loaded_latency_delays", "kernels_saxpy_bytes": "saxpy_bytes",
}


def run_variables(variables: dict | None, table: dict | None) -> dict:
    """The kernels_* variables a run plans with: those set, and the profile row's value of each of
    PROFILE_VARIABLES that is not."""
    table = table or {}
    return {**{name: table[column] for name, column in PROFILE_VARIABLES.items() if column in table},
            **(variables or {})}


def enabled_experiments(experiments: list, variables: dict) -> list:
    """The registry's experiments (in its order) whose switch kernels_<name>_enabled is on (absent: on)."""
    enabled = []
    for name in experiments:
        switch = variables.get(f"kernels_{name}_enabled", True)
        if not isinstance(switch, bool):
            raise ValueError(f"{name}: its _enabled switch must be true or false, got {switch!r}")
        if switch:
            enabled.append(name)
    return enabled


def price_facts(facts: dict) -> dict:
    """What MLC's and the workloads' prices read of the facts (filters mlc_plan, mlc_price, workloads_price: the
    caches, the NUMA nodes, the architecture, what perf can count); provision may install perf between two plans."""
    return {"caches": facts.get("caches"), "nodes": (facts.get("numa") or {}).get("nodes"),
            "architecture": (facts.get("cpu") or {}).get("architecture"),
            "perf": (facts.get("perf") or {}).get("capability")}


def host_plan(facts: dict, settings: dict) -> dict:
    """The host's plan: {profile, budget_s, bound_s, points, experiments: [record + points (the
    processes to run)], storage...}. settings: {profile, table (the profile's row of __kernels_profiles),
    variables (every kernels_* variable), selected (the experiments to plan, in any order; absent: those of `enabled`
    named in `tagged`, the experiments --tags/--skip-tags kept, fleet_tagged_experiments), enabled (the
    experiments a run without --tags would select: each selected one is fitted as in that run, so that --tags
    chooses what runs, never how it is measured; absent: those of `experiments`, the registry's names, whose
    kernels_<name>_enabled is on; both absent: the selected ones), paths ({bin, bundle,
    aio_directory}), hugetlb_pages (free 2 MiB pages, or None before tuning), storage (the fio role's priced
    record, or None), priced (the records the mlc and workloads roles priced, each {} or None where the
    experiment does not run), inputs (an earlier plan's `inputs` in the same run, or None: taken instead of the
    INPUT_KEYS above, and `priced` where the facts it was priced on are these facts' price_facts)}."""
    # Under Ansible the settings are lazy: only the keys read are rendered, so an earlier plan's inputs leave the
    # settings' own templates for them unrendered (the measure play's plan reuses preflight's: about 0.1 s of the
    # controller's CPU a host).
    inputs = settings.get("inputs")
    facts = _plain(facts)
    priced_on = price_facts(facts)
    kept = set(INPUT_KEYS) | ({"priced"} if inputs and inputs.get("price_facts") == priced_on else set())
    settings = {key: _plain(inputs.get(key) if inputs and key in kept else settings.get(key))
                for key in (*INPUT_KEYS, *SITUATION_KEYS)}
    settings["variables"] = run_variables(settings["variables"], settings["table"])
    if settings["enabled"] is None and settings["experiments"] is not None:  # the role's: from the switches
        settings["enabled"] = enabled_experiments(settings["experiments"], settings["variables"])
    host = Host(facts)
    _check_pinned_cpu(settings.get("variables") or {}, host)
    table = settings.get("table") or {}
    profile = settings.get("profile")
    budget = table.get("budget_s", BUDGET_S.get(profile))
    allowances = table.get("allowance_s") or {}
    selected = settings.get("selected")
    if selected is None:  # the role's: the enabled experiments --tags/--skip-tags kept (rendering the registry once)
        tagged = set(settings.get("tagged") or ())
        selected = [name for name in settings.get("enabled") or [] if name in tagged]
    names = [name for name in selected if name in _PLANNERS]
    # A --tags run's experiments share the budget as they would in the whole run: what the others leave
    # (a skip, room to spare) goes where it would go there, and a tag never buys an experiment more.
    whole = list(dict.fromkeys([*(name for name in settings.get("enabled") or [] if name in _PLANNERS), *names]))
    given = {name: float(allowances[name]) if budget is not None and name in allowances else None for name in whole}
    # what the other measuring roles run, priced by them (fio_price, mlc_price, workloads_price), in their order
    others = [priced for priced in [settings.get("storage"), *(settings.get("priced") or [])] if priced]
    fitted = {name: _fit(name, host, settings, given[name]) for name in whole}
    if budget is not None:
        fitted = _spend_leftover(host, settings, fitted, given)
        storage_s = float((settings.get("storage") or {}).get("bound_s") or 0.0)
        fitted = _yield_refinement(host, settings, fitted, float(budget) - storage_s)
    experiments = [{**fitted[name].record(), "run": fitted[name].processes,
                    **{key: getattr(fitted[name], key) for key in REFINE_KEYS
                       if getattr(fitted[name], key) is not None}} for name in names]
    experiments += [{**priced, "run": []} for priced in others]
    bound = round(sum(e["bound_s"] for e in experiments), 3)
    in_budget = round(sum(e["bound_s"] for e in experiments if e["name"] not in OUTSIDE_BUDGET), 3)
    return {"profile": profile, "budget_s": budget, "bound_s": bound,
            "inputs": {**{key: settings[key] for key in (*INPUT_KEYS, "priced")}, "price_facts": priced_on},
            "points": sum(e["points"] for e in experiments),
            "within_budget": None if budget is None else in_budget <= float(budget),
            "experiments": experiments}


# Priced like the rest, but on top of the budget, which they neither count against nor are cut by: Intel MLC, the
# user's own licensed tool, runs for the modes and durations they set (mlc_modes, mlc_duration_s); the workloads
# run programs whose time the plan cannot cut (the user's commands; the reference workload, whose size is the
# profile's so hosts compare on it) after about a dozen tasks of their own, which quick's 2 minutes cannot hold
# beside the kernels' floors (90-98 s of the 99 s fio leaves, on the big fixture topologies).
OUTSIDE_BUDGET = {"mlc", "workloads"}


def plan_points(plan: dict, experiment: str) -> list[dict]:
    """The processes the plan gives an experiment, for tasks/run_points.yml ({label, argv})."""
    for entry in plan.get("experiments") or []:
        if entry["name"] == experiment:
            return [dict(point) for point in entry["run"]]
    raise ValueError(f"{experiment} is not in this host's plan (was it selected and enabled when the plan was made?)")


def plan_points_as(points: list[dict], experiment: str, variant: str, options: dict | None = None) -> list[dict]:
    """The plan's processes of `experiment` run as `variant` (prefetch as prefetch_hw_off): the experiment
    name and output file renamed, and each option in `options` given its new value."""
    renamed = []
    for point in points:
        argv = [variant if arg == experiment and index and point["argv"][index - 1] == "--experiment"
                else arg.replace(f"/results/{experiment}.jsonl", f"/results/{variant}.jsonl")
                for index, arg in enumerate(point["argv"])]
        for option, value in (options or {}).items():
            argv[argv.index(option) + 1] = str(value)
        renamed.append(dict(point, argv=argv))
    return renamed


def plan_entry(plan: dict, experiment: str) -> dict:
    """The plan's record of one experiment, without its processes (with an adaptive sweep's
    refine_max_points, which the role runs and the manifest leaves out)."""
    for entry in plan.get("experiments") or []:
        if entry["name"] == experiment:
            return {key: value for key, value in entry.items() if key != "run"}
    return {}


def plan_notes(plan: dict, experiment: str) -> list[str]:
    """An experiment's notes for the manifest: what the plan says of it, then what the budget cut."""
    entry = plan_entry(plan, experiment)
    return list(entry.get("notes") or []) + list(entry.get("cuts") or [])


def plan_record(plan: dict) -> dict:
    """What the manifest keeps: the plan without the processes' argv and the inputs it was made from."""
    return {**{key: value for key, value in plan.items() if key not in ("experiments", "inputs")},
            "experiments": [{key: value for key, value in entry.items() if key not in ("run", *REFINE_KEYS)}
                            for entry in plan.get("experiments") or []]}


def plan_summary(plan: dict, host: str) -> str:
    """'zen3-01: 21 experiments, 412 points, at most 1 m 54 s (budget 2 m)'; with experiments priced on top of the
    budget, what the budget holds and what comes on top: '... at most 2 m 34 s: 2 m within the 2 m budget,
    workloads 35 s on top of it'."""
    measured = [e for e in plan.get("experiments") or [] if not e.get("skip")]
    budget = plan.get("budget_s")
    outside = [e for e in plan.get("experiments") or [] if e["name"] in OUTSIDE_BUDGET and e["bound_s"]]
    on_top = ", ".join(f"{e['name']} {_seconds(e['bound_s'])}" for e in outside)
    if budget is None:
        tail = " (full: no budget, this is its price)"
    elif not plan.get("within_budget"):
        tail = f", OVER the {_seconds(float(budget))} budget" + (f"; on top of the budget: {on_top}" if outside else "")
    elif outside:
        inside = sum(e["bound_s"] or 0 for e in plan.get("experiments") or [] if e["name"] not in OUTSIDE_BUDGET)
        tail = f": {_seconds(inside)} within the {_seconds(float(budget))} budget, {on_top} on top of it"
    else:
        tail = f" (budget {_seconds(float(budget))})"
    count, points = len(measured), plan.get("points", 0)
    return (f"{host}: {count} experiment{'' if count == 1 else 's'}, {points:,} point{'' if points == 1 else 's'}, "
            "at most "
            f"{_seconds(float(plan.get('bound_s') or 0))}{tail}")


def plan_cuts(plan: dict) -> list[str]:
    """One line per experiment the budget cut: 'c2c: 96 of 16,256 ordered CPU pairs (budget): ...'."""
    return [f"{entry['name']}: {cut}" for entry in plan.get("experiments") or [] for cut in entry.get("cuts") or []]


def host_line(facts: dict) -> str:
    """What the facts snapshot found, in one line: 'AMD EPYC 9B14, 2 CPUs (core), 1 NUMA node(s), caches 32.00 KB /
    1.00 MB / 32.00 MB, THP madvise, governor None, virtualization kvm'."""
    from ansible.plugins.filter.mathstuff import human_readable  # Ansible's, as the filter of that name writes sizes

    cpu = facts.get("cpu") or {}
    kinds = " + ".join(str(kind.get("kind")) for kind in (facts.get("topology") or {}).get("core_kinds") or [])
    caches = " / ".join(human_readable(cache.get("size_bytes")) for cache in facts.get("caches") or [])
    return (f"{cpu.get('model_name')}, {cpu.get('logical_cpus')} CPUs ({kinds}), "
            f"{(facts.get('numa') or {}).get('nodes')} NUMA node(s), caches {caches}, "
            f"THP {(facts.get('thp') or {}).get('enabled')}, governor {facts.get('governor')}, "
            f"virtualization {facts.get('virtualization')}")


def price_report(hosts, hostvars) -> list[str]:
    """Preflight's one message for every host of the play, before any host is changed: per host its price
    (plan_summary), what its facts snapshot found (host_line) and each cut of the budget (plan_cuts). One task for
    the run, where a line a host was a task on every host."""
    lines = []
    for host in hosts:
        variables = hostvars[host]
        plan = variables["fleet_plan"]
        lines += [plan_summary(plan, host), "  " + host_line(variables["fleet_facts"]),
                  *("  " + cut for cut in plan_cuts(plan))]
    return lines


def fio_price(jobs, runtime_s, ramp_s, size_bytes, enabled=True) -> dict:
    """The storage experiment's record in the plan: one fio process per job, each ramp + runtime seconds,
    after the probes and the scratch file's layout (fio role); {} when it does not run."""
    jobs = list(jobs or [])
    if not enabled:
        return {}
    bound = len(jobs) * (PROCESS_S + float(runtime_s) + float(ramp_s)) + FIO_SETUP_S \
        + int(size_bytes) / FIO_LAYOUT_BYTES_PER_S
    return {"name": "fio", "points": len(jobs), "processes": len(jobs), "bound_s": round(bound, 3),
            "allowance_s": None, "target_rel": None, "cap_s": None, "skip": None,
            "notes": [f"{len(jobs)} jobs x ({ramp_s} s ramp + {runtime_s} s measured)"], "cuts": []}


# ---- What the other measuring roles run (fio, workloads, Intel MLC), priced for the same plan ----

# workloads (roles/workloads): the role's own tasks around its processes (planning them, the directories, the
# miss probe, planning perf record, keeping each report and the stderr, the record): about a dozen Ansible
# tasks, most of the 20 s a quick run of the reference workload took on the busy dev VM.
WORKLOADS_TASKS_S = 11.0
# One run of the reference workload (the kernels' alloc_walk): start and allocator set-up, then per byte of
# live blocks (busy dev VM: 2.4 s of wall time at 32 MiB, about 6.5 s at 64 MiB with perf stat around it).
REFERENCE_RUN_S = 2.0
REFERENCE_S_PER_BYTE = 0.1 / MIB
# perf record (about 4 kHz of samples) slows a run by at most this much; perf report of one profile.
PERF_RECORD_FACTOR = 1.25
PERF_REPORT_S = 1.5
# Intel MLC (roles/mlc; MLC is licensed and cannot be run on the dev VM, so these follow MLC's usage text and
# the outputs in tests/fixtures/mlc_samples, not a measurement): an MLC process's start (topology probe, its
# buffers of up to 200 MB a thread, in parallel), the role's own tasks (checksum, unpacking, msr, keeping each
# output), the steps each mode measures for -t seconds: the loaded-latency ladder's 19 delays, the 5 read-write
# mixes of the injection bandwidths (max_bandwidth tries injection rates per mix: "several minutes"), one cell
# per node pair of the matrices; c2c_latency takes no -t: a few seconds per cell (HIT, HITM, each node pair).
MLC_START_S = 3.0
MLC_TASKS_S = 12.0
MLC_LOADED_DELAYS = 19
MLC_MIXES = 5
MLC_MAX_BANDWIDTH_RATES = 20
MLC_C2C_CELL_S = 2.0


def _mlc_steps(mode: str, nodes: int) -> int:
    """How many -t measurements one MLC process of `mode` takes."""
    return {"loaded_latency": MLC_LOADED_DELAYS, "peak_injection_bandwidth": MLC_MIXES,
            "max_bandwidth": MLC_MIXES * MLC_MAX_BANDWIDTH_RATES, "latency_matrix": nodes * nodes,
            "bandwidth_matrix": nodes * nodes}.get(mode, 1)


def mlc_price(mlc_plan, duration_s, nodes=1, supplied=True, architecture="x86_64", enabled=True) -> dict:
    """Intel MLC's record in the plan, from the mlc role's planned processes (filter mlc_plan): each MLC process's
    start and its measurements of duration_s seconds, after the role's own tasks; a record that says why MLC does
    not run (not supplied: it is licensed and cannot be downloaded; not x86-64), priced at nothing; {} when it is
    not selected (mlc_enabled false, --skip-tags mlc)."""
    if not enabled:
        return {}
    record = {"name": "mlc", "points": 0, "processes": 0, "bound_s": 0.0, "allowance_s": None, "target_rel": None,
              "cap_s": None, "skip": None, "notes": [], "cuts": []}
    if not supplied:
        return {**record, "skip": "Intel MLC was not supplied (mlc_path): it is licensed, fleetscope cannot download "
                                  "it, so it does not run"}
    if architecture not in ("x86_64", "amd64"):
        return {**record, "skip": f"Intel MLC runs on x86-64 only; this host is {architecture}"}
    nodes = max(1, _int(nodes, 1))
    duration = float(duration_s)
    invocations = list((mlc_plan or {}).get("invocations") or [])
    bound = MLC_TASKS_S
    for invocation in invocations:
        timed = invocation.get("params", {}).get("duration_s") is not None
        mode = invocation.get("mode")
        measuring = _mlc_steps(mode, nodes) * duration if timed else \
            MLC_C2C_CELL_S * (2 + 2 * nodes * (nodes - 1))
        bound += MLC_START_S + measuring
    modes = list(dict.fromkeys(invocation.get("mode") for invocation in invocations))
    return {**record, "processes": len(invocations), "bound_s": round(bound, 3),
            "notes": [f"{len(invocations)} MLC processes ({', '.join(modes) or 'no mode'}), {duration:g} s per "
                      "measurement; priced from MLC's own steps (its loaded-latency ladder, read-write mixes, node "
                      "pairs), not cut by the budget: MLC runs as mlc_modes and mlc_duration_s say"]
            + list((mlc_plan or {}).get("notes") or [])}


def _live_bytes(command) -> int:
    """The --live-bytes of a reference workload's alloc_walk command (0 where it gives none)."""
    command = [str(item) for item in command or []]
    if "--live-bytes" in command[:-1]:
        return _int(command[command.index("--live-bytes") + 1])
    return 0


def workloads_price(workloads, repeats, timeout_s, perf=None, perf_record=True, enabled=True) -> dict:
    """The workloads' record in the plan, from the role's list (the reference workload first, then
    fleet_workloads): per workload one timed process of its runs, then perf record by time (and by misses where
    the PMU counts hardware events) and a perf report of each, after the role's own tasks. The reference
    workload's run is priced from its size (live bytes), within its cap; a user's command only by its cap
    (timeout_s): nothing else bounds a command fleetscope does not know. {} when the workloads do not run."""
    workloads = list(workloads or [])
    if not enabled or not workloads:
        return {}
    # facts without a perf probe (a sysfs tree priced by `fleetscope plan`): priced as a PMU that samples both
    capability = (perf or {}).get("capability") or ("none" if perf else "hardware")
    profiles = (2 if capability == "hardware" else 1 if capability == "software" else 0) if perf_record else 0
    bound, processes, notes = WORKLOADS_TASKS_S, 0, []
    for workload in workloads:
        runs = max(1, _int(workload.get("repeats") or repeats, 1))
        cap = float(workload.get("timeout_s") or timeout_s)
        live = _live_bytes(workload.get("command")) if workload.get("reference") else 0
        run_s = min(cap, REFERENCE_RUN_S + live * REFERENCE_S_PER_BYTE) if live else cap
        bound += PROCESS_S + runs * run_s + profiles * (PROCESS_S + min(cap, run_s * PERF_RECORD_FACTOR) + PERF_REPORT_S)
        processes += 1 + profiles
        how = f"{_human(live)} of live blocks, {run_s:.3g} s a run" if live else f"priced at its cap of {cap:g} s a run"
        notes.append(f"{workload.get('name')}: {runs} run{'s' if runs != 1 else ''} under perf stat"
                     + (f" and {profiles} under perf record" if profiles else "") + f" ({how})")
    if len(notes) > 32:  # the manifest keeps at most 64 notes an experiment
        notes[31:] = [f"and {len(notes) - 31} more workloads, each priced the same way"]
    if not profiles:
        notes.append("no perf record run: " + ("workloads_perf_record is false" if not perf_record
                                               else f"perf counts nothing here (counter tier {capability})"))
    elif capability == "hardware":
        notes.append("priced with a perf record run by misses too: the host's PMU may sample none of the miss events")
    return {"name": "workloads", "points": len(workloads), "processes": processes, "bound_s": round(bound, 3),
            "allowance_s": None, "target_rel": None, "cap_s": None, "skip": None, "notes": notes, "cuts": []}


class FilterModule:
    def filters(self):
        return {"host_plan": host_plan, "plan_points": plan_points, "plan_points_as": plan_points_as,
                "plan_entry": plan_entry,
                "plan_notes": plan_notes,
                "plan_record": plan_record, "plan_summary": plan_summary, "plan_cuts": plan_cuts,
                "price_report": price_report,
                "fio_price": fio_price, "mlc_price": mlc_price, "workloads_price": workloads_price}
