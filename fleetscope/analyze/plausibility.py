"""Plausibility checks: the numbers docs/methods.md says the tool must refuse to present as normal, the
measurements of one run that contradict each other, and the points whose own samples show noise.

Each rule looks at one run of one host in the warehouse and returns flag rows with their evidence: the
value, the threshold and what was compared. A rule that cannot run (no DIMM facts, no bandwidth
measured, no cache sizes to tell which working sets are DRAM-sized) returns a `not_run` row with the
reason, so a missing check is never mistaken for a passed one. Rows are stored in the `flags` table.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass

import duckdb

from fleetscope.analyze import firmware
from fleetscope.catalog import flag_view
from fleetscope.resources import sql
from fleetscope.units import format_bytes, format_number

DRAM_CHASE_MIN_NS = 25.0        # a dependent random chase in DRAM cannot be faster than this
# An L1 hit takes 3 to 5 core cycles on every core of the reference library whose source states its clock (Golden
# Cove 4.8, Zen 3 and 4, Neoverse N1, Cortex-A72 4.0, Gracemont and Firestorm 3.0): a first plateau twice the
# slowest of them is not an L1 hit but timing overhead or a chain that is not dependent. Twice leaves room for a
# clock stated at turbo while the core ran at base.
L1_HIT_MAX_CYCLES = 10.0
MAX_CORE_CLOCK_GHZ = 7.0        # no core runs faster (the fastest shipped boost is 6.2 GHz): a clock above is mismeasured
DRAM_SIZED_FACTOR = 2           # a working set at least this many times the largest cache is DRAM-sized
LOADED_IDLE_FACTOR = 1.5        # the lightest-load point of a loaded-latency curve vs the measured idle latency
# Load only ever adds queueing: a loaded point below the idle latency by at least this share, with the two CI95s
# apart (or, for MLC's ladders, which carry no CI, by LOADED_BELOW_IDLE_NO_CI) is measured on another clock or
# is noise, and the curve under it is not a loaded-latency curve to read.
LOADED_BELOW_IDLE_MIN = 0.02
LOADED_BELOW_IDLE_NO_CI = 0.05
HUGE_PAGE_BYTES = 2 * 1024 * 1024
TLB_BELOW_CONTROL = 0.9         # a TLB chain's minimum / its control's: the control loads the same lines, so it is the floor
NT_OVER_READ_FACTOR = 1.5     # single-thread non-temporal write GB/s vs read GB/s at DRAM size
NT_SIZE_AGREEMENT = 0.2       # two such figures at different DRAM sizes within this fraction confirm each other
# Consistency: two chases of one working set and page policy whose CI95s are further apart than this fraction
# of the lower median disagree (the dev VM's experiments agree within ~4% outside contention).
DISAGREEMENT_GAP = 0.25
# experiments_disagree compares at most this many chases of one experiment, working set and page policy
CHASES_PER_SET = 16
LITTLE_FACTOR = 2.0           # I/Os in flight (IOPS x mean latency) vs the queue depth asked for, either way
ONE_CPU_UTILIZED = 1.25       # threads placed apart that used at most this many CPUs' time ran on one
# Noise, from a point's own samples (the same tests as the kernels' sampler: kernels/src/stats.c):
NOISE_MIN_SAMPLES = 5         # fewer samples say nothing about their spread
NOISY_MAD_REL = 0.15          # MAD / median above this: the middle half spans more than +-15% of the median
BIMODAL_GAP_REL = 0.15        # the widest gap between two groups, relative to the median, at least this ...
BIMODAL_SEPARATION = 3.0      # ... and this many times the larger group's own MAD
BIMODAL_MIN_SHARE = 0.2       # each group holds at least this share of the samples (and at least 2)
BIMODAL_MAX_SAMPLES = 100_000  # the kernels' sampler takes at most this many; a larger point is not split-tested
CANARY_DRIFT = 1.3            # the L1 canary moved across a point, or read slower than the run's usual, by this
C2C_ASYMMETRY = 2.0           # one direction of a c2c pair's fastest round trip over the other's, above this: flagged
PLAN_OVERSHOOT = 1.25         # an experiment's wall time / the upper bound its plan priced it at (view plan_vs_actual)
# A level whose size bracket lies further than a quarter octave (the adaptive sweep's resolution) from the size sysfs
# or a reference's source states: what the chase could keep is not what the part has.
SIZE_OFF_STATED_OCTAVES = 0.25


@dataclass(frozen=True)
class Flag:
    rule: str
    status: str            # flagged | clear | not_run
    subject: str           # the view (or 'run') holding the number
    item: str | None = None          # which row of it: the worst one
    value: float | None = None
    threshold: float | None = None
    unit: str | None = None
    comparison: str | None = None    # what was compared, in words
    evidence: str | None = None
    reason: str | None = None        # why the rule could not run


@dataclass(frozen=True)
class Run:
    connection: duckdb.DuckDBPyConnection
    run_id: str
    host: str
    facts: dict
    largest_cache_bytes: int | None
    relative_curve: bool = False     # a reference host's published curve in ns over L1 (tinymembench)
    point_noise: tuple = ()   # PointNoise rows (point_samples.sql), read once for the noise rules
    levels: tuple = ()        # the run's inferred_levels rows (dicts), computed before its flags
    claims: tuple = ()        # the run's firmware_claims rows (fleetscope.analyze.firmware), computed before its flags
    reference: bool = False   # a reference host's published curve (origin 'reference'), not a fleetscope run
    pattern: str | None = None  # how a reference curve was measured (random-lines, line-per-page, sequential)

    @functools.cached_property
    def point_labels(self) -> tuple[str, ...]:
        """Each point of point_noise in the words of its params (_point_label), worked out once for the three
        noise rules."""
        return tuple(_point_label(point.experiment, point.point_index, point.params) for point in self.point_noise)

    def rows(self, query: str, *parameters: object) -> list[tuple]:
        """Rows of warehouse/queries/plausibility/<query>.sql: its first two parameters are this run's
        (run_id, host), the rest `parameters`."""
        return self.connection.execute(sql(f"plausibility/{query}"),
                                       [self.run_id, self.host, *parameters]).fetchall()


def _dram_sized(run: Run) -> int | None:
    return None if run.largest_cache_bytes is None else DRAM_SIZED_FACTOR * run.largest_cache_bytes


def _against(rule: str, subject: str, values: list[tuple[str, float]], threshold: float, unit: str,
             comparison: str, breaks: Callable[[float], bool], worst: Callable, note: str = "") -> Flag:
    """One flag row over (item, value) pairs: flagged when any value breaks the rule, evidence the worst."""
    item, value = worst(values, key=lambda pair: pair[1])
    broken = [pair for pair in values if breaks(pair[1])]
    evidence = f"{len(broken)} of {len(values)} checked break it; worst {item}: {value:.4g} {unit}{note}"
    return Flag(rule, "flagged" if broken else "clear", subject, item, value, threshold, unit, comparison, evidence)


def dram_chase_too_fast(run: Run) -> list[Flag]:
    """A DRAM-sized random chase under ~25 ns: the chain is not dependent, or prefetchers are being fed."""
    rule = "dram_chase_too_fast"
    comparison = f"fastest sample of a DRAM-sized dependent random chase < {DRAM_CHASE_MIN_NS:g} ns"
    sources = {
        "zero_queue_levels": [(f"level DRAM, {format_bytes(size)}", ns)
                              for size, ns in run.rows("zero_queue_dram_minima")],
        "mlp_curve": [(f"k = 1, {format_bytes(size)}", ns) for size, ns in run.rows("mlp_single_chain_minima")],
    }
    dram_sized = _dram_sized(run)
    flags = []
    if dram_sized is None:
        flags.append(Flag(rule, "not_run", "latency_curve", reason="sysfs reported no cache sizes, so no working set of "
                          "the latency sweep or pattern_stride is known to be DRAM-sized"))
    elif run.relative_curve:
        flags.append(Flag(rule, "not_run", "latency_curve", reason="a relative curve (ns over L1) does not give the "
                          "memory plateau's absolute latency"))
    else:
        sources["latency_curve"] = [(f"{policy} {format_bytes(size)}", ns) for policy, size, ns
                                    in run.rows("latency_curve_dram_minima", dram_sized)]
        sources["pattern_stride_latency"] = [(f"random, stride {stride} B", ns) for stride, ns
                                             in run.rows("pattern_stride_dram_minima", dram_sized)]
    if not sources.get("latency_curve") and not run.relative_curve:
        # no swept size known to be DRAM-sized (an imported curve without its cache sizes, a sweep that stopped
        # short of 2 x the LLC): the curve's own memory plateau, as `infer --csv` judges a curve alone
        plateau = _memory_plateau(run)
        if plateau is not None:
            flags = [flag for flag in flags if flag.subject != "latency_curve"]
            flags.append(plateau)
    for subject, values in sources.items():
        if values:
            flags.append(_against(rule, subject, values, DRAM_CHASE_MIN_NS, "ns", comparison,
                                  lambda ns: ns < DRAM_CHASE_MIN_NS, min))
    if not flags:
        flags.append(Flag(rule, "not_run", "run", reason="this run has no DRAM-sized random chase "
                          "(latency sweep, zero_queue DRAM, mlp k = 1 or pattern_stride random)"))
    return flags


def _first_kind_levels(run: Run) -> list[dict]:
    """The inferred levels of the run's fastest core kind (all of them on a one-kind host), every page policy."""
    kinds = [level.get("core_kind") for level in run.levels]
    fastest = kinds[0] if kinds else None
    return [level for level in run.levels if level.get("core_kind") == fastest and level.get("level")]


def _memory_plateau(run: Run) -> Flag | None:
    """dram_chase_too_fast on the memory plateau the inference found (the level labelled DRAM, or without reported
    cache sizes the last plateau when the sweep ends on it), for a run with no swept size known to be DRAM-sized;
    None when the curve has no such plateau."""
    rule, subject = "dram_chase_too_fast", "latency_curve"
    if run.pattern == "sequential":
        return Flag(rule, "not_run", subject, reason="a sequential walk's memory plateau measures the prefetchers, "
                    "not a dependent chase's latency")
    largest = dict(run.rows("latency_curve_largest"))
    checked, notes = [], []
    for policy in dict.fromkeys(level["page_policy"] for level in _first_kind_levels(run)):
        levels = sorted((level for level in _first_kind_levels(run) if level["page_policy"] == policy),
                        key=lambda level: level["level_index"])
        memory = next((level for level in levels if level["level"] == "DRAM"), None)
        if memory is None and len(levels) > 1 and levels[-1]["capacity_bytes"] is None \
                and levels[-1]["plateau_last_bytes"] == largest.get(policy):
            memory = levels[-1]
            notes.append(f"{policy} {memory['level']} is the sweep's last plateau (up to "
                         f"{format_bytes(largest[policy])}): memory, unless the sweep stopped before it")
        if memory is not None and memory.get("latency_ns") is not None:
            checked.append((f"{policy} {memory['level']} plateau from {format_bytes(memory['plateau_first_bytes'])} "
                            "(inferred)", memory["latency_ns"]))
    if not checked:
        return None
    return _against(rule, subject, checked, DRAM_CHASE_MIN_NS, "ns",
                    f"memory plateau of a dependent random chase < {DRAM_CHASE_MIN_NS:g} ns (no swept size is known "
                    "to be DRAM-sized: the curve's own memory plateau)", lambda ns: ns < DRAM_CHASE_MIN_NS, min,
                    "; " + "; ".join(notes) if notes else "")


def size_off_stated(run: Run) -> list[Flag]:
    """A cache level whose size bracket (size_low_bytes .. size_high_bytes) lies more than SIZE_OFF_STATED_OCTAVES
    from the size sysfs states (a reference host: its source's published size). The value is the bracket's edge
    nearest the stated size over it (1 inside the bracket). Below: the chase kept less than the part has - a core
    or cache shared with other work (an SMT sibling, another guest on the host's core or LLC, which a guest cannot
    see) holds the rest, so the curve reads the share this thread got, or on small pages the TLB's reach ends
    inside the level and its walks rise like a cache step (a Zen 3's 8 MiB of L2 TLB in its 32 MiB L3); above: a
    stated size that is per core on a level the chase shares, or a mislabelled level. Every level that breaks it
    is named in the evidence."""
    rule, subject = "size_off_stated", "latency_curve"   # the curve the levels were read from
    checked = []
    for level in run.levels:
        low, high, stated = level.get("size_low_bytes"), level.get("size_high_bytes"), level.get("sysfs_size_bytes")
        if not (level.get("level") and low and high and stated):
            continue
        nearest = min(max(stated, low), high)
        kind = f" {level['core_kind']}" if level.get("core_kind") else ""
        checked.append((f"{level.get('page_policy') or 'curve'}{kind} {level['level']} {format_bytes(low)}-"
                        f"{format_bytes(high)} vs stated {format_bytes(stated)}", nearest / stated))
    if not checked:
        return [Flag(rule, "not_run", subject, reason="no inferred level has both a size bracket and a stated size "
                     "(sysfs, a reference's source, `infer --caches`)")]
    limit = 2 ** SIZE_OFF_STATED_OCTAVES

    def breaks(ratio: float) -> bool:
        return not 1 / limit <= ratio <= limit

    broken = [(item, ratio) for item, ratio in checked if breaks(ratio)]
    note = "; all that break it: " + "; ".join(item for item, _ratio in broken) if len(broken) > 1 else ""
    if any(ratio < 1 for _item, ratio in broken):
        note += ("; below the stated size the chase kept only a share (a core or cache shared with other work) or, "
                 "on small pages, a TLB's reach ended inside the level")
    return [_against(rule, subject, checked, limit, "ratio",
                     f"nearest bracket edge / stated size outside [1/{limit:.3g}, {limit:.3g}] "
                     f"({SIZE_OFF_STATED_OCTAVES:g} octave)", breaks,
                     lambda values, key: max(values, key=lambda pair: abs(math.log(key(pair)))), note)]


def first_plateau_above_l1_hit(run: Run) -> list[Flag]:
    """A curve whose first plateau is far above an L1 hit in core cycles (L1_HIT_MAX_CYCLES): what it calls L1 holds
    timing overhead (a lab report's 3.5 ns at 5.8 GHz is 20 cycles) or a chain that is not dependent, and every
    level above it carries the same error. Cycles are the level's latency at the clock fleetscope measured, or for
    a reference curve the clock its source states."""
    rule, subject = "first_plateau_above_l1_hit", "latency_curve"
    if run.relative_curve:
        return [Flag(rule, "not_run", subject, reason="a relative curve (ns over L1) has no L1 latency of its own")]
    first = [level for level in _first_kind_levels(run) if level["level_index"] == 1 and level.get("latency_ns")]
    if not first:
        return [Flag(rule, "not_run", subject, reason="no first plateau was inferred from a latency curve in this run")]
    timed = [level for level in first if level.get("latency_cycles")]
    if not timed:
        why = ("its source states no core clock (`fleetscope import curve --clock-ghz`)" if run.reference
               else "the run measured no core clock")
        return [Flag(rule, "not_run", subject, reason=f"the first plateau ({format_number(first[0]['latency_ns'])} "
                     f"ns) cannot be put in cycles: {why}")]
    clocks = {level["page_policy"]: level["latency_cycles"] / level["latency_ns"] for level in timed}
    wild = {policy: clock for policy, clock in clocks.items() if not 0.1 <= clock <= MAX_CORE_CLOCK_GHZ}
    if wild:
        policy, clock = next(iter(wild.items()))
        return [Flag(rule, "not_run", subject, reason=f"the core clock behind the {policy} curve's cycles, "
                     f"{format_number(clock)} GHz, is no core's (none runs above {MAX_CORE_CLOCK_GHZ:g} GHz): its "
                     "cycles cannot be trusted, so neither can a count of them")]
    checked = [(f"{level['page_policy']} {level['level']}: {format_number(level['latency_ns'])} ns at "
                f"{format_number(clocks[level['page_policy']])} GHz", level["latency_cycles"]) for level in timed]
    broken = any(cycles > L1_HIT_MAX_CYCLES for _text, cycles in checked)
    return [_against(rule, subject, checked, L1_HIT_MAX_CYCLES, "cycles",
                     f"first plateau > {L1_HIT_MAX_CYCLES:g} core cycles (an L1 hit takes 3 to 5)",
                     lambda cycles: cycles > L1_HIT_MAX_CYCLES, max,
                     "; not an L1 hit: the curve carries timing overhead or its loads are not dependent, and every "
                     "level above it the same error" if broken else "")]


def _megatransfers(dimm: dict) -> int | None:
    for key in ("configured_memory_speed", "speed"):
        match = re.match(r"\s*(\d+)\s*(MT/s|MHz)", str(dimm.get(key) or ""))
        if match:
            return int(match.group(1))
    return None


def dram_peak_gb_s(facts: dict) -> tuple[float | None, str]:
    """The host's theoretical DRAM bandwidth: the peak the inventory states for it (fleet_dram_peak_gbps: the user
    knows the machine better than a VM's firmware does), else the DIMMs' peak the facts read from the SMBIOS table
    (per channel its speed x width; a DIMM per channel where the locators name none, an upper bound), else (a
    bundle from before) dmidecode's DIMMs summed the same way. Returns (GB/s, how) or (None, why not)."""
    memory = facts.get("memory") or {}
    if memory.get("dram_peak_stated_gbps"):
        return float(memory["dram_peak_stated_gbps"]), "stated for the host in the inventory (fleet_dram_peak_gbps)"
    smbios = memory.get("smbios")
    if smbios is not None:
        if smbios.get("peak_gbps"):
            return float(smbios["peak_gbps"]), (f"SMBIOS: {smbios.get('populated')} DIMMs on {smbios.get('channels')} "
                                                f"channels, {smbios.get('channels_from')}")
        return None, (f"no DRAM peak from SMBIOS ({smbios.get('reason') or smbios.get('peak_note')}) and none stated "
                      "for the host (fleet_dram_peak_gbps)")
    dimms = memory.get("dimms") or []
    if not dimms:
        return None, f"no DIMMs in the facts ({memory.get('dimms_note') or 'dmidecode reported none'})"
    total, parts = 0.0, []
    for dimm in dimms:
        speed = _megatransfers(dimm)
        if speed is None:
            return None, f"DIMM {dimm.get('locator') or '?'} has no speed in dmidecode ({dimm.get('speed')!r})"
        width_match = re.match(r"\s*(\d+)\s*bits", str(dimm.get("data_width") or ""))
        width = int(width_match.group(1)) if width_match else 64
        total += speed * 1e6 * width / 8 / 1e9
        parts.append(f"{speed} MT/s x {width} bit")
    return total, f"{len(dimms)} DIMMs ({', '.join(parts)}), one channel each at most"


def bandwidth_above_dram_peak(run: Run) -> list[Flag]:
    """Bandwidth above the host's theoretical DRAM peak for a working set far beyond the LLC."""
    rule = "bandwidth_above_dram_peak"
    peak, how = dram_peak_gb_s(run.facts)
    dram_sized = _dram_sized(run)
    measured = {}
    if dram_sized is not None:
        measured["mlc_bandwidth"] = [(f"{mode} {traffic}", mb_s / 1000) for mode, traffic, mb_s
                                     in run.rows("mlc_bandwidth_dram", dram_sized)]
        measured["mlc_loaded_latency"] = [(f"delay {delay} cycles ({path} run {index})", mb_s / 1000)
                                          for delay, path, index, mb_s
                                          in run.rows("mlc_loaded_latency_dram", dram_sized)]
        measured["bandwidth_points"] = [
            (f"{experiment}: {op} {store} {pattern} {stride} B x{threads} ({format_bytes(size)})", gb_s)
            for experiment, op, store, pattern, stride, threads, size, gb_s
            in run.rows("bandwidth_points_dram", dram_sized)]
        measured["loaded_latency_curve"] = [(f"{traffic} delay {delay}", gb_s) for traffic, delay, gb_s
                                            in run.rows("loaded_latency_curve_dram", dram_sized)]
    measured = {subject: values for subject, values in measured.items() if values}
    missing = []
    if peak is None:
        missing.append(f"no theoretical DRAM peak: {how}")
    if dram_sized is None:
        missing.append("sysfs reported no cache sizes, so no buffer is known to be far beyond the LLC")
    elif not measured:
        missing.append("no DRAM-sized bandwidth measured in this run (bandwidth kernels or MLC with a buffer of at "
                       f"least {format_bytes(dram_sized)})")
    if missing:
        return [Flag(rule, "not_run", subject, reason="; ".join(missing)) for subject in (measured or ["run"])]
    comparison = f"DRAM-sized bandwidth > theoretical peak {peak:.4g} GB/s ({how})"
    return [_against(rule, subject, values, peak, "GB/s", comparison, lambda gb_s: gb_s > peak, max)
            for subject, values in measured.items()]


def firmware_claims_disagree(run: Run) -> list[Flag]:
    """What the firmware claims against what the run measured (fleetscope.analyze.firmware's rows): an HMAT latency
    or a SLIT distance more than LATENCY_FACTOR away from the measured one, either way, or an HMAT bandwidth the run
    beat. A comparison no peer makes: a wrong table misleads every tool that trusts it. (The DIMMs' peak is
    bandwidth_above_dram_peak's.)"""
    rule, subject = "firmware_claims_disagree", "firmware_claims"
    claims = [row for row in run.claims if row["source"] in ("ACPI HMAT", "ACPI SLIT")]
    compared = [row for row in claims if row["verdict"] != firmware.NOT_COMPARED]
    if not compared:
        notes = sorted({row["note"] for row in claims if row["note"]})
        return [Flag(rule, "not_run", subject, reason="; ".join(notes) or "no firmware claim in the facts")]
    broken = [row for row in compared if row["verdict"] == firmware.DISAGREES]
    worst = max(broken or compared, key=lambda row: abs(math.log(row["ratio"])))
    item = f"{worst['source']} {worst['figure']}"
    evidence = (f"{len(broken)} of {len(compared)} claims disagree; {'worst' if broken else 'farthest'} {item}: "
                f"claims {worst['claimed']:.4g} {worst['unit']}, measured {worst['measured']:.4g} ({worst['measured_by']})")
    return [Flag(rule, "flagged" if broken else "clear", subject, item, worst["ratio"], firmware.LATENCY_FACTOR,
                 "ratio", f"measured / claimed outside [1/{firmware.LATENCY_FACTOR:g}, {firmware.LATENCY_FACTOR:g}] "
                 f"for a latency or distance, above {1 + firmware.BANDWIDTH_EXCESS:g} for a bandwidth", evidence)]


def _grant_shortfalls(rows: list[tuple]) -> list[tuple[str, float]]:
    """(item, granted fraction) for points asking for huge pages; the part below 2 MiB cannot be huge."""
    checked = []
    for label, size, granted in rows:
        required = (size // HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES
        if required:
            checked.append((f"{label} {format_bytes(size)}", (granted or 0) / required))
    return checked


def huge_pages_not_granted(run: Run) -> list[Flag]:
    """Huge pages requested but not granted (measured from /proc/self/smaps by the kernels)."""
    rule = "huge_pages_not_granted"
    comparison = "share of the 2 MiB-aligned buffer on huge pages < 1"
    guest = run.facts.get("virtualization") not in (None, "none")
    note = ("; in a guest the hypervisor may still back granted huge pages with 4 KiB pages" if guest else "")
    sources = {
        "latency_curve": _grant_shortfalls(run.rows("latency_curve_huge_grants")),
        "zero_queue_levels": _grant_shortfalls(run.rows("zero_queue_huge_grants")),
        "bandwidth_points": _grant_shortfalls(run.rows("bandwidth_points_huge_grants")),
        "tlb_reach": [(f"{size} {pages} pages", 1.0 if granted else 0.0)
                      for size, pages, granted in run.rows("tlb_reach_huge_grants")],
    }
    flags = [_against(rule, subject, values, 1.0, "fraction", comparison, lambda share: share < 1, min, note)
             for subject, values in sources.items() if values]
    return flags or [Flag(rule, "not_run", "run", reason="no point of this run asked for huge pages")]


def loaded_idle_far_above_idle(run: Run) -> list[Flag]:
    """A loaded-latency curve whose idle point is far above the measured idle latency (wrong units or a
    misconfigured tool)."""
    rule = "loaded_idle_far_above_idle"
    curves = {
        "mlc_loaded_latency": [(f"{traffic or 'unspecified'} ({path} run {index})", latency)
                               for path, index, traffic, latency in run.rows("mlc_loaded_idle_points")],
        # the kernel's lightest loaded point per traffic (its idle point is itself a chase, not a reference)
        "loaded_latency_curve": [(f"{traffic} (delay {delay})", latency)
                                 for traffic, delay, latency in run.rows("loaded_latency_lightest_points")],
    }
    curves = {subject: values for subject, values in curves.items() if values}
    if not curves:
        return [Flag(rule, "not_run", "run", reason="no loaded-latency curve in this run (neither the loaded_latency "
                     "kernel nor MLC --loaded_latency ran)")]
    reference = None
    for source, query in (
        ("MLC idle latency (DRAM)", "idle_mlc_dram"),
        ("zero_queue DRAM median", "idle_zero_queue_dram"),
        ("mlp k = 1 chase", "idle_mlp_single_chain"),
        ("loaded_latency idle point", "idle_loaded_latency"),
    ):
        value = run.rows(query)[0][0]
        if value is not None:
            reference = (source, value)
            break
    if reference is None:
        return [Flag(rule, "not_run", subject, reason="no idle DRAM latency measured in this run "
                     "(MLC --idle_latency for DRAM, zero_queue, mlp or the loaded_latency idle point) to compare "
                     "the curve's idle point with") for subject in curves]
    source, idle = reference
    threshold = LOADED_IDLE_FACTOR * idle
    comparison = (f"latency at the lightest load > {LOADED_IDLE_FACTOR:g} x idle latency "
                  f"({source}: {idle:.4g} ns)")
    return [_against(rule, subject, values, threshold, "ns", comparison, lambda latency: latency > threshold, max)
            for subject, values in curves.items()]


def load_never_ran(run: Run) -> list[Flag]:
    """A loaded-latency point whose load threads moved no data while its chase was sampled: its latency is an idle
    chase's labelled as a loaded one (beside the suite's other work a load thread once got no CPU for a whole
    point). Flagged at 0 GB/s; the value is the lowest load bandwidth of the run's loaded points."""
    rule, subject = "load_never_ran", "loaded_latency_curve"
    rows = run.rows("loaded_latency_load")
    if not rows:
        return [Flag(rule, "not_run", subject, reason="no loaded point of the loaded_latency kernel in this run")]
    checked = [(f"{traffic} (delay {delay}, {threads} load thread{'s' if threads != 1 else ''})", gb_s)
               for traffic, delay, threads, gb_s in rows]
    return [_against(rule, subject, checked, 0.0, "GB/s", "load threads' bandwidth during the chase samples = 0 "
                     "(the point measured an idle chase)", lambda gb_s: gb_s <= 0, min)]


def tlb_below_control(run: Run) -> list[Flag]:
    """A TLB point whose chain of one line per page read faster than its control, which loads the same number of
    lines packed into few pages: translation cannot save time, so the two chains, timed in turns, met different
    conditions (a neighbour on the core or its cache; an Emerald Rapids guest read 64 pages at 1.77 ns beside a
    control of 1.98). Minima, so that a burst of load on one sample does not count; the translation cost read
    from that point is not one."""
    rule, subject = "tlb_below_control", "tlb_reach"
    rows = run.rows("tlb_reach_minima")
    if not rows:
        return [Flag(rule, "not_run", subject, reason="no tlb point with a control chain in this run")]
    checked = [(f"{page_size} {pages} pages: tlb {tlb_min:.4g} ns, control {control_min:.4g} ns (minima)",
                tlb_min / control_min) for page_size, pages, tlb_min, control_min, _cpu in rows]
    return [_against(rule, subject, checked, TLB_BELOW_CONTROL, "ratio",
                     f"tlb chain's minimum / its control's < {TLB_BELOW_CONTROL:g}",
                     lambda ratio: ratio < TLB_BELOW_CONTROL, min)]


def c2c_asymmetric(run: Run) -> list[Flag]:
    """A c2c pair whose fastest round trip one way is more than C2C_ASYMMETRY x the other way's: a cache line bounced
    between the same two CPUs takes the same path both ways, so the two directions met different placements (a
    guest's vCPUs moved by the hypervisor between them: a Zen 4 guest read 158 ns from CPU 0 to 1 and 41 ns back,
    another CCX's latency against the same one's). Minima, so a burst of load on some samples does not count; the
    pair's figures are not the machine's."""
    rule, subject = "c2c_asymmetric", "c2c_matrix"
    rows = run.rows("c2c_pair_minima")
    if not rows:
        return [Flag(rule, "not_run", subject, reason="no c2c pair measured both ways in this run")]
    checked = [(f"CPU {cpu_a} to {cpu_b}: {there:.4g} ns, back: {back:.4g} ns (minima)",
                max(there, back) / min(there, back)) for cpu_a, cpu_b, there, back in rows]
    return [_against(rule, subject, checked, C2C_ASYMMETRY, "ratio",
                     f"one direction's fastest round trip / the other's > {C2C_ASYMMETRY:g}",
                     lambda ratio: ratio > C2C_ASYMMETRY, max)]


def _below_idle_flag(subject: str, idle_text: str, checked: list[tuple[str, float, bool]], threshold: float,
                     comparison: str) -> Flag:
    """One loaded_below_idle row over (item, share below idle, counts): flagged where any item counts."""
    rule = "loaded_below_idle"
    broken = [item for item in checked if item[2]]
    item, share, _counts = max(broken or checked, key=lambda entry: entry[1])
    evidence = (f"{len(broken)} of {len(checked)} loaded points below idle ({idle_text}); "
                f"{'worst' if broken else 'lowest'} {item}: {share:.1%} below")
    return Flag(rule, "flagged" if broken else "clear", subject, item, share, threshold, "fraction", comparison,
                evidence)


def loaded_below_idle(run: Run) -> list[Flag]:
    """A loaded point whose latency is below the idle latency: load only adds queueing, so such a point was
    measured on a faster clock (an uncore or memory clock raised by the load) or is noise, and a knee read
    from its curve would be too. The kernel's points are compared with its own idle point (the chase without
    load threads) and count only where their CI95s are apart; MLC's ladders with MLC's idle DRAM latency."""
    rule = "loaded_below_idle"
    flags = []
    points = run.rows("loaded_latency_points_ci")
    idle = [row for row in points if row[2] == 0]
    loaded = [row for row in points if row[2] > 0]
    if loaded and idle:
        _traffic, _delay, _rate, idle_ns, idle_low, idle_high = min(idle, key=lambda row: row[3])
        checked = []
        for traffic, delay, _rate, median, low, high in loaded:
            share = 1 - median / idle_ns
            apart = high is not None and idle_low is not None and high < idle_low
            checked.append((f"{traffic} delay {delay}: {median:.4g} ns [CI95 {_ci(low)}, {_ci(high)}]", share,
                            apart and share >= LOADED_BELOW_IDLE_MIN))
        flags.append(_below_idle_flag(
            "loaded_latency_curve", f"the chase without load threads: {idle_ns:.4g} ns [CI95 {_ci(idle_low)}, "
            f"{_ci(idle_high)}]", checked, LOADED_BELOW_IDLE_MIN,
            f"loaded point's latency at least {LOADED_BELOW_IDLE_MIN:.0%} below the idle point's, their CI95s apart"))
    elif loaded:
        flags.append(Flag(rule, "not_run", "loaded_latency_curve", reason="the loaded_latency curve has no idle point "
                          "(the chase without load threads) to compare its loaded points with"))
    ladder = run.rows("mlc_loaded_points")
    mlc_idle = run.rows("idle_mlc_dram")[0][0]
    if ladder and mlc_idle:
        checked = [(f"{traffic or 'unspecified'} delay {delay} ({path} run {index}): {latency:.4g} ns",
                    1 - latency / mlc_idle, 1 - latency / mlc_idle >= LOADED_BELOW_IDLE_NO_CI)
                   for path, index, traffic, delay, latency in ladder]
        flags.append(_below_idle_flag("mlc_loaded_latency", f"MLC idle latency (DRAM): {mlc_idle:.4g} ns", checked,
                                      LOADED_BELOW_IDLE_NO_CI,
                                      f"loaded point's latency at least {LOADED_BELOW_IDLE_NO_CI:.0%} below MLC's "
                                      "idle DRAM latency (MLC gives no CI)"))
    elif ladder:
        flags.append(Flag(rule, "not_run", "mlc_loaded_latency", reason="MLC measured no idle DRAM latency "
                          "(--idle_latency) to compare its loaded-latency ladder with"))
    return flags or [Flag(rule, "not_run", "run", reason="no loaded-latency curve in this run (neither the "
                          "loaded_latency kernel nor MLC --loaded_latency ran)")]


def _ci(value: float | None) -> str:
    return "?" if value is None else f"{value:.4g}"


def stride_bytes_counted(run: Run) -> list[Flag]:
    """Byte accounting that counts stride bytes instead of the lines moved."""
    rule = "stride_bytes_counted"
    rows = run.rows("pattern_stride_accounting")
    checked = [(f"{pattern}, stride {stride} B", footprint / (lines * line))
               for pattern, stride, lines, line, footprint in rows if lines and line and footprint is not None]
    # bandwidth kernel: bytes_per_pass must be 64 B x the lines moved, and a pass moves exactly one line per
    # block of its span (copy and triad: one per line of each array); counting stride bytes breaks both
    moved = []
    for experiment, op, pattern, stride, span, lines, bytes_per_pass in run.rows("bandwidth_accounting"):
        if not (lines and bytes_per_pass and span and stride):
            continue
        blocks = max(1, span // (64 if op in ("copy", "triad") else stride))  # a span under one stride: one block
        ratios = (bytes_per_pass / (64 * lines), lines / blocks)
        moved.append((f"{experiment}: {op} {pattern} {stride} B ({format_bytes(span)})",
                      max(ratios, key=lambda ratio: abs(ratio - 1))))
    flags = []
    if moved:
        flags.append(_against(rule, "bandwidth_points", moved, 1.0, "ratio",
                              "bytes_per_pass / (64 B x lines moved) != 1, or more lines than the span's blocks",
                              lambda ratio: abs(ratio - 1) > 1e-9,
                              lambda values, key: max(values, key=lambda pair: abs(pair[1] - 1))))
    else:
        flags.append(Flag(rule, "not_run", "bandwidth_points", reason="no bandwidth kernel point in this run"))
    if checked:
        flags.insert(0, _against(rule, "pattern_stride_latency", checked, 1.0, "ratio",
                                 "footprint_bytes / (lines touched x line bytes) != 1",
                                 lambda ratio: abs(ratio - 1) > 1e-9, lambda values, key: max(
                                     values, key=lambda pair: abs(pair[1] - 1))))
    return flags


def nt_write_far_above_read(run: Run) -> list[Flag]:
    """A single-thread non-temporal store figure far above single-thread read bandwidth at DRAM size is suspect
    (docs/methods.md): streaming stores that never reached memory, or a buffer the kernel did not cover. The method
    says to validate such a figure by size scaling: one that another non-temporal write figure at a different
    DRAM-sized working set confirms (within NT_SIZE_AGREEMENT) is real — cores whose single-thread reads are
    latency-bound, such as Intel's server parts, write with streaming stores well above 1.5x read."""
    rule = "nt_write_far_above_read"
    dram_sized = _dram_sized(run)
    if dram_sized is None:
        return [Flag(rule, "not_run", "bandwidth_points", reason="sysfs reported no cache sizes, so no working set "
                     "is known to be DRAM-sized")]
    rows = run.rows("nt_write_and_read_dram", dram_sized)
    read = max((gb_s for _unused, _unused, store, _unused, gb_s in rows if store == "none"), default=None)
    sized = [(experiment, op, size, gb_s) for experiment, op, store, size, gb_s in rows if store == "nt"]
    if read is None or not sized:
        return [Flag(rule, "not_run", "bandwidth_points", reason="no single-thread DRAM-sized read and non-temporal "
                     "write pair in this run")]
    threshold = NT_OVER_READ_FACTOR * read

    def confirmed(size: int, gb_s: float) -> bool:
        return any(other != size and abs(other_gb_s - gb_s) <= NT_SIZE_AGREEMENT * gb_s
                   for _unused, _unused, other, other_gb_s in sized)

    best: dict[str, tuple[float, int]] = {}  # item -> its highest figure and that figure's working set
    for experiment, op, size, gb_s in sized:
        item = f"{experiment}: {op} nt"
        best[item] = max(best.get(item, (0.0, 0)), (gb_s, size))
    unconfirmed = {gb_s for gb_s, size in best.values() if gb_s > threshold and not confirmed(size, gb_s)}
    confirmations = [f"{item} {gb_s:.4g} GB/s at {format_bytes(size)}" for item, (gb_s, size) in best.items()
                     if gb_s > threshold and gb_s not in unconfirmed]
    note = (f"; above {NT_OVER_READ_FACTOR:g} x read but confirmed by size scaling: " + ", ".join(confirmations)
            if confirmations else "")
    return [_against(rule, "bandwidth_points", [(item, gb_s) for item, (gb_s, _unused) in best.items()], threshold,
                     "GB/s", f"single-thread non-temporal write > {NT_OVER_READ_FACTOR:g} x read ({read:.4g} GB/s) "
                     f"at DRAM size, and no figure at another DRAM size within {NT_SIZE_AGREEMENT:.0%}",
                     lambda gb_s: gb_s in unconfirmed, max, note)]


def _interval(median: float, low: float, high: float) -> str:
    return f"{median:.4g} ns [CI95 {low:.4g}, {high:.4g}]"


def _canary(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return ""
    return f" (L1 canary {before:.3g} -> {after:.3g} ns)"


@dataclass(frozen=True)
class _Chase:
    """One chase of chase_points.sql, or a latency-sweep bracket standing for a size it did not measure."""
    experiment: str
    label: str
    size: int
    policy: str
    median: float
    low: float
    high: float
    canary: str = ""

    def text(self) -> str:
        return f"{self.experiment} {self.label}: {_interval(self.median, self.low, self.high)}{self.canary}"


def _gap(one: _Chase, other: _Chase) -> float:
    """How far apart two chases' CI95s are, relative to the lower median (0 when they overlap)."""
    apart = max(other.low - one.high, one.low - other.high, 0.0)
    return apart / min(one.median, other.median)


def _sweep_bracket(lower: _Chase, upper: _Chase, size: int) -> _Chase:
    """What the latency sweep says of a size it did not measure, from the swept sizes either side of it: a
    chase's latency does not fall as its working set grows, so the value lies between the lower CI bound of
    the next smaller swept size and the upper bound of the next larger one."""
    return _Chase("latency_sweep", f"between {format_bytes(lower.size)} and {format_bytes(upper.size)}", size,
                  lower.policy, math.sqrt(lower.median * upper.median), lower.low, upper.high)


def experiments_disagree(run: Run) -> list[Flag]:
    """The same working set and page policy chased by two experiments of one run (latency sweep, zero_queue,
    write_cost's read walk, mlp at k = 1, pattern_stride random x 64 B) reading apart beyond their CIs. The L1
    canary cannot see a neighbour evicting a shared LLC; two experiments measuring one thing at different times
    can. A size the sweep passed between two of its points is compared with the sweep's bracket."""
    rule = "experiments_disagree"
    chases = [_Chase(experiment, f"{level + ' ' if level else ''}{format_bytes(size)} {policy}", size, policy,
                     median, low, high, _canary(before, after))
              for experiment, _unused, level, size, policy, median, low, high, before, after in run.rows("chase_points")
              if median and median > 0 and low is not None and high is not None]
    # a host could send thousands of chases of one working set: each experiment's first few stand for it, so
    # the pairs stay linear in the points (a real run has one per size, page policy and core kind)
    same_set: dict[tuple[int, str], list[_Chase]] = {}
    swept: dict[str, dict[int, _Chase]] = {}  # page policy -> size -> the sweep's first chase of it
    kept: Counter = Counter()
    for chase in chases:
        kept[chase.experiment, chase.size, chase.policy] += 1
        if kept[chase.experiment, chase.size, chase.policy] <= CHASES_PER_SET:
            same_set.setdefault((chase.size, chase.policy), []).append(chase)
        if chase.experiment == "latency_sweep":
            swept.setdefault(chase.policy, {}).setdefault(chase.size, chase)
    swept_sizes = {policy: sorted(sizes) for policy, sizes in swept.items()}
    pairs: list[tuple[_Chase, _Chase]] = []
    for group in same_set.values():
        for index, one in enumerate(group):
            pairs += [(one, other) for other in group[index + 1:] if other.experiment != one.experiment]
            sizes = swept_sizes.get(one.policy, [])
            at = bisect.bisect_left(sizes, one.size)
            if one.experiment != "latency_sweep" and 0 < at < len(sizes) and sizes[at] != one.size:
                below, above = swept[one.policy][sizes[at - 1]], swept[one.policy][sizes[at]]
                pairs.append((one, _sweep_bracket(below, above, one.size)))
    if not pairs:
        return [Flag(rule, "not_run", "run", reason="no working set and page policy was chased by two experiments of "
                     "this run (latency sweep, zero_queue, write_cost read, mlp k = 1, pattern_stride random x 64 B)")]
    comparison = (f"two experiments' CI95s of one working set and page policy further apart than "
                  f"{DISAGREEMENT_GAP:.0%} of the lower median")
    flags = []
    for experiment in sorted({chase.experiment for pair in pairs for chase in pair}):
        own = [pair if pair[0].experiment == experiment else pair[::-1] for pair in pairs
               if experiment in (pair[0].experiment, pair[1].experiment)]
        checked = [(f"{one.experiment} {one.label} vs {other.experiment} {other.label}", _gap(one, other))
                   for one, other in own]
        worst_one, worst_other = max(own, key=lambda pair: _gap(*pair))
        flags.append(_against(rule, flag_view(experiment), checked, DISAGREEMENT_GAP, "fraction", comparison,
                              lambda gap: gap > DISAGREEMENT_GAP, max,
                              f"; {worst_one.text()} vs {worst_other.text()}"))
    return flags


def storage_littles_law(run: Run) -> list[Flag]:
    """I/Os in flight by Little's law (IOPS x mean latency) far from the queue depth a storage point asked for:
    above it, the latency or the IOPS is wrong (units, or a latency that leaves out part of the I/O's time);
    far below it, the queue was never kept full (a synchronous engine, or a submitter that could not keep up),
    so the point is not the queue depth it is labelled with."""
    rule = "storage_littles_law"
    rows = run.rows("storage_in_flight")
    if not rows:
        return [Flag(rule, "not_run", "run", reason="no storage point with IOPS and a mean latency in this run "
                     "(fio jobs or the aio kernel)")]
    comparison = (f"I/Os in flight (IOPS x mean latency) / queue depth outside [1/{LITTLE_FACTOR:g}, "
                  f"{LITTLE_FACTOR:g}]")
    flags = []
    for subject in sorted({row[0] for row in rows}):
        own = [row for row in rows if row[0] == subject]
        checked = [(f"{item} ({engine}): {in_flight:.3g} in flight at queue depth {depth}",
                    in_flight / depth) for _unused, item, engine, depth, in_flight in own]
        flags.append(_against(rule, subject, checked, LITTLE_FACTOR, "ratio", comparison,
                              lambda ratio: abs(math.log(ratio)) > math.log(LITTLE_FACTOR) if ratio > 0 else True,
                              lambda values, key: max(values, key=lambda pair: abs(math.log(max(pair[1], 1e-12))))))
    return flags


def threads_shared_one_cpu(run: Run) -> list[Flag]:
    """A placement of two or more threads (affinity, smt) that ran on one logical CPU: every thread saw itself
    on the same single CPU, or the threads' CPU time over the measured windows (each thread's own task clock)
    adds up to little more than one CPU's, or perf's task-clock says the whole process used about one CPU."""
    rule = "threads_shared_one_cpu"
    threads = run.rows("thread_placements")
    processes = run.rows("placement_cpus_utilized")
    if not threads and not processes:
        return [Flag(rule, "not_run", "run", reason="no placement of two or more threads in this run (the affinity "
                     "and smt kernels)")]
    checked: dict[str, list[tuple[str, float]]] = {}
    notes: dict[str, str] = {}
    groups = sorted({row[:4] for row in threads}, key=str)
    for experiment, placement, workload, repeat in groups:
        members = [row for row in threads if row[:4] == (experiment, placement, workload, repeat)]
        label = f"{placement} {workload} repeat {repeat}"
        seen = {tuple(row[7] or ()) for row in members}
        if len(members) >= 2 and len(seen) == 1 and len(next(iter(seen))) == 1:
            checked.setdefault(experiment, []).append((f"{label}: all {len(members)} threads seen on CPU "
                                                       f"{next(iter(seen))[0]} alone", 1.0))
        timed = [(cpu_s, windows_s) for *_unused, cpu_s, windows_s in members if cpu_s is not None and windows_s]
        if len(timed) == len(members) >= 2:
            used = sum(cpu_s / windows_s for cpu_s, windows_s in timed)
            checked.setdefault(experiment, []).append((f"{label}: the threads' task clock over their windows", used))
        else:
            notes[experiment] = ("; the threads' own CPU time was not recorded (kernels before fleetscope "
                                 "recorded thread_cpu_s), so their sched_getcpu() view and perf's stand for it")
    for experiment, placement, workload, utilized in processes:
        if any(row[0] == experiment and row[1] == placement and row[2] == workload for row in threads):
            checked.setdefault(experiment, []).append((f"{placement} {workload}: perf task-clock of the process "
                                                       "(setup included)", utilized))
    if not checked:
        return [Flag(rule, "not_run", "run", reason="the placements of two or more threads recorded neither the "
                     "CPUs their threads ran on nor their CPU time")]
    return [_against(rule, flag_view(experiment), values, ONE_CPU_UTILIZED, "CPUs",
                     f"CPUs' worth of time used by threads placed on different CPUs <= {ONE_CPU_UTILIZED:g}",
                     lambda cpus: cpus <= ONE_CPU_UTILIZED, min, notes.get(experiment, ""))
            for experiment, values in sorted(checked.items())]


@dataclass(frozen=True)
class PointNoise:
    """A row of point_samples.sql: what one point's samples say of it."""
    experiment: str
    point_index: int
    unit: str
    params: str
    canary_before_ns: float | None
    canary_after_ns: float | None
    tries: int | None
    count: int
    median: float
    mad: float
    split_checked: bool           # not for points of more than BIMODAL_MAX_SAMPLES
    gap: float | None             # the widest gap leaving each side enough samples (None: too few samples)
    lower_median: float | None
    upper_median: float | None
    group_mad: float | None       # the larger of the two sides' MADs

    @property
    def mad_rel(self) -> float:
        """Median absolute deviation over the median (infinite for a zero median)."""
        return self.mad / abs(self.median) if self.median else math.inf

    @property
    def bimodal(self) -> bool:
        """The samples fall in two groups: sorted, split at the widest gap that leaves each side at least
        BIMODAL_MIN_SHARE of them (and at least 2); two groups when that gap is at least BIMODAL_GAP_REL of the
        median and more than BIMODAL_SEPARATION x the larger side's MAD. One outlier is no group. The same
        test as stats_dispersion in kernels/src/stats.c."""
        return (self.gap is not None and self.median > 0 and self.gap >= BIMODAL_GAP_REL * self.median
                and self.gap > BIMODAL_SEPARATION * self.group_mad)


def point_noise(connection: duckdb.DuckDBPyConnection, run_id: str, host: str) -> list[PointNoise]:
    """Every point of one run with what its own samples say of it (point_samples.sql)."""
    return [PointNoise(*row) for row in
            connection.execute(sql("plausibility/point_samples"),
                               [run_id, host, BIMODAL_MIN_SHARE, BIMODAL_MAX_SAMPLES]).fetchall()]


_LABEL_PARAMS = ("level", "working_set_bytes", "page_policy", "pattern", "stride_bytes", "chains", "walk", "op",
                 "store", "traffic", "delay_cycles", "placement", "workload", "thread", "repeat", "engine",
                 "queue_depth", "cpu_a", "cpu_b", "pages", "page_size")


def _point_label(experiment: str, index: int, params: str) -> str:
    """An experiment's point in the words of its params (the bandwidth sections' flags start `<experiment>:`)."""
    try:
        values = json.loads(params) if params else {}
    except ValueError:
        values = {}
    words = []
    for key in _LABEL_PARAMS:
        value = values.get(key) if isinstance(values, dict) else None
        if value is None or isinstance(value, (dict, list)):
            continue
        words.append(format_bytes(value) if key == "working_set_bytes" and isinstance(value, int)
                     else f"{key} {value}" if key in ("chains", "thread", "repeat", "stride_bytes", "queue_depth",
                                                      "cpu_a", "cpu_b", "pages", "delay_cycles")
                     else str(value))
    return f"{experiment}: {' '.join(words) or f'point {index}'}"


def _tries(tries: int | None) -> str:
    return f", after {tries} tries" if tries and tries > 1 else ""


def _noise_rule(run: Run, rule: str, measure: Callable[[PointNoise], tuple[float, str] | None], threshold: float,
                unit: str, comparison: str, breaks: Callable[[float], bool], reason: str) -> list[Flag]:
    """One flag row per experiment over the points `measure` can judge: (value, what it saw) or None."""
    checked: dict[str, list[tuple[str, float]]] = {}
    seen: dict[str, str] = {}
    labels = run.point_labels
    repeated = {label for label, count in Counter(labels).items() if count > 1}
    for point, label in zip(run.point_noise, labels):
        measured = measure(point)
        if measured is None:
            continue
        value, saw = measured
        item = f"{label} (point {point.point_index})" if label in repeated else label
        checked.setdefault(point.experiment, []).append((item, value))
        seen[item] = saw
    if not checked:
        return [Flag(rule, "not_run", "run", reason=reason)]
    flags = []
    for experiment, values in sorted(checked.items()):
        worst = max(values, key=lambda pair: pair[1])
        flags.append(_against(rule, flag_view(experiment), values, threshold, unit, comparison, breaks, max,
                              f"; {seen[worst[0]]}"))
    return flags


def noisy_point(run: Run) -> list[Flag]:
    """A point whose samples spread widely: MAD / median above NOISY_MAD_REL (docs/methods.md: flag noise with
    MAD / median; pyperf warns at a standard deviation of 10%, about 0.07 in MAD terms for normal noise)."""
    def measure(point: PointNoise) -> tuple[float, str] | None:
        if point.count < NOISE_MIN_SAMPLES or not point.median:  # no spread relative to a median of 0
            return None
        return point.mad_rel, (f"median {point.median:.4g} {point.unit}, MAD {point.mad_rel:.1%} of it over "
                               f"{point.count} samples{_tries(point.tries)}")

    return _noise_rule(run, "noisy_point", measure, NOISY_MAD_REL, "fraction",
                       f"MAD / median of a point's samples > {NOISY_MAD_REL:g}",
                       lambda value: value > NOISY_MAD_REL,
                       f"no point of this run has {NOISE_MIN_SAMPLES} samples or more")


def bimodal_point(run: Run) -> list[Flag]:
    """A point whose samples fall into two groups (PointNoise.bimodal): the point measured two states (a
    neighbour came and went, pages moved), and its median is whichever the count happened to favour."""
    def measure(point: PointNoise) -> tuple[float, str] | None:
        if point.count < NOISE_MIN_SAMPLES or not point.split_checked:
            return None
        if not point.bimodal:
            return 0.0, "one group"
        return point.gap / point.median, (f"groups around {point.lower_median:.4g} and {point.upper_median:.4g} "
                                          f"{point.unit} over {point.count} samples{_tries(point.tries)}")

    return _noise_rule(run, "bimodal_point", measure, BIMODAL_GAP_REL, "fraction",
                       f"samples in two groups: a gap of at least {BIMODAL_GAP_REL:g} x the median and more than "
                       f"{BIMODAL_SEPARATION:g} x either group's MAD, each group at least {BIMODAL_MIN_SHARE:.0%} "
                       "of the samples", lambda value: value > 0,
                       f"no point of this run has between {NOISE_MIN_SAMPLES} and {BIMODAL_MAX_SAMPLES} samples")


def canary_drift(run: Run) -> list[Flag]:
    """The L1 canary read before and after a point moved across it, or read well above the run's usual canary:
    the core ran slower (frequency, a neighbour on the core, steal) while the point was measured."""
    readings = [value for point in run.point_noise for value in (point.canary_before_ns, point.canary_after_ns)
                if value and value > 0]
    if not readings:
        return [Flag("canary_drift", "not_run", "run", reason="no point of this run read the L1 canary")]
    usual = statistics.median(readings)

    def measure(point: PointNoise) -> tuple[float, str] | None:
        before, after = point.canary_before_ns, point.canary_after_ns
        if not (before and after and before > 0 and after > 0):
            return None
        ratio = max(after / before, before / after, before / usual, after / usual)
        return ratio, (f"canary {before:.3g} ns before, {after:.3g} ns after; the run's median canary "
                       f"{usual:.3g} ns{_tries(point.tries)}")

    return _noise_rule(run, "canary_drift", measure, CANARY_DRIFT, "ratio",
                       f"L1 canary after / before (either way), or a reading / the run's median canary > "
                       f"{CANARY_DRIFT:g}", lambda ratio: ratio > CANARY_DRIFT,
                       "no point of this run read the L1 canary")


def measured_while_throttling(run: Run) -> list[Flag]:
    """A point measured while some CPU's thermal_throttle count rose: its numbers are of a slowed clock."""
    rule, subject = "measured_while_throttling", "point_counters"
    rows = run.rows("throttled_points")
    known = [(f"{experiment} point {index} ({kernel})", 1.0 if throttled else 0.0)
             for experiment, index, kernel, throttled in rows if throttled is not None]
    if not known:
        return [Flag(rule, "not_run", subject, reason=(
            "no point carries per-point counters" if not rows else
            "the host's kernel exposes no thermal_throttle counters (common in VMs and on non-Intel CPUs)"))]
    return [_against(rule, subject, known, 0.0, "throttled (1 yes, 0 no)",
                     "some CPU's core or package thermal_throttle count rose during the point",
                     lambda value: value > 0, max)]


def plan_overshoot(run: Run) -> list[Flag]:
    """An experiment that ran more than 25% past the price its plan gave it: the plan's time model did not
    hold on this host (slower or busier than its rates), so the budget it was fitted into did not either."""
    rule, subject = "plan_overshoot", "plan_vs_actual"
    rows = run.rows("plan_overshoot")
    if not rows:
        return [Flag(rule, "not_run", subject, reason="this run carries no plan (made before fleetscope priced "
                     "its runs), or no planned experiment recorded its time")]
    return [_against(rule, subject, [(f"{experiment}: {actual:.1f} s of a planned {planned:.1f} s", actual / planned)
                                     for experiment, planned, actual in rows],
                     PLAN_OVERSHOOT, "ratio", f"wall time / planned upper bound > {PLAN_OVERSHOOT:g}",
                     lambda ratio: ratio > PLAN_OVERSHOOT, max)]


RULES: tuple[Callable[[Run], list[Flag]], ...] = (
    dram_chase_too_fast, first_plateau_above_l1_hit, size_off_stated, bandwidth_above_dram_peak,
    firmware_claims_disagree, huge_pages_not_granted, loaded_idle_far_above_idle, loaded_below_idle, load_never_ran,
    tlb_below_control, c2c_asymmetric,
    stride_bytes_counted, nt_write_far_above_read, experiments_disagree, storage_littles_law, threads_shared_one_cpu,
    noisy_point, bimodal_point, canary_drift, measured_while_throttling, plan_overshoot,
)


def check_run(connection: duckdb.DuckDBPyConnection, run_id: str, host: str, levels: list[dict] = (),
              claims: list[dict] = ()) -> list[dict]:
    """Every rule's rows for one run, as dicts for the `flags` table; `levels` and `claims`: the run's
    inferred_levels and firmware_claims rows."""
    facts_row = connection.execute(sql("plausibility/run_facts"), [run_id, host]).fetchone()
    facts = json.loads(facts_row[0]) if facts_row else {}
    largest = connection.execute(sql("plausibility/largest_cache"), [run_id, host]).fetchone()[0]
    stated = connection.execute(sql("derive/curve_reading"), [run_id, host]).fetchone()
    run = Run(connection, run_id, host, facts, largest, relative_curve=bool(stated and stated[2]),
              point_noise=tuple(point_noise(connection, run_id, host)), levels=tuple(levels), claims=tuple(claims),
              reference=stated is not None, pattern=stated[0] if stated else None)
    return [asdict(flag) for rule in RULES for flag in rule(run)]


def check_inferred_levels(levels: list, largest_bytes: int, relative: bool) -> list[Flag]:
    """The rules that can run on an inferred hierarchy alone (a curve given to `fleetscope infer --csv`, with no
    run around it): a memory plateau under DRAM_CHASE_MIN_NS, and each level's size bracket against the size
    `--caches` states (size_off_stated). `levels` are fleetscope.analyze.inference.CacheLevel rows of a curve
    whose largest size is `largest_bytes`."""
    stated = Run(None, "", "", {}, None, levels=tuple(asdict(level) for level in levels))
    return [*_curve_memory_plateau(levels, largest_bytes, relative), *size_off_stated(stated)]


def _curve_memory_plateau(levels: list, largest_bytes: int, relative: bool) -> list[Flag]:
    """dram_chase_too_fast on a curve alone: the memory plateau is the level labelled DRAM or, without reported
    cache sizes, the last plateau when the sweep ends on it."""
    rule, subject = "dram_chase_too_fast", "inferred_levels"
    memory = next((level for level in levels if level.level == "DRAM"), None)
    last = levels[-1] if levels else None
    guessed = (memory is None and len(levels) > 1 and last.capacity_bytes is None
               and last.plateau_last_bytes == largest_bytes)
    if guessed:
        memory = last
    if memory is None:
        return [Flag(rule, "not_run", subject, reason="no memory plateau: no level is labelled DRAM and the curve "
                     "does not end on a plateau after a first one")]
    if relative:
        return [Flag(rule, "not_run", subject, item=memory.level, reason="a relative curve (ns over L1) does not give "
                     "the memory plateau's absolute latency")]
    note = (f"; {memory.level} is the sweep's last plateau (up to {format_bytes(largest_bytes)}): memory, unless the "
            "sweep stopped before it" if guessed else "")
    return [_against(rule, subject, [(memory.level, memory.latency_ns)], DRAM_CHASE_MIN_NS, "ns",
                     f"memory plateau of a dependent random chase < {DRAM_CHASE_MIN_NS:g} ns",
                     lambda ns: ns < DRAM_CHASE_MIN_NS, min, note)]
