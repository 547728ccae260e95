"""Where a workload's time goes, read the way the allocator profiling study reads it.

Inputs are what perf printed, as fleetscope's parsers read it: the events of one `perf stat` (counted,
`not supported` or `not counted`, multiplexed or not) and the profiles of `perf record` (one per sampled
event: its functions' shares and sample counts). From them:

- rates per 1k instructions and per access (IPC, cache, L1d, LLC, dTLB, iTLB, L1-icache and branch misses),
  each None where an event was not counted: a figure the PMU did not give is never a zero;
- a per-function table setting each function's share of the time profile (cycles, or cpu-clock without a
  PMU) beside its share of the miss profile (cache-misses, or the nearest miss event sampled), their
  ratio, and a mark where the miss share is at least MISS_HEAVY times the time share (or the reverse);
- a sample-count rule per profile: a function is ranked only with at least MIN_FUNCTION_SAMPLES samples
  (fewer and its share is not known within a factor of two: the 95% Poisson interval of 10 counts is
  4.8-18.4), and two neighbours whose counts differ by less than 1.96 sqrt(a + b) share a rank;
- the case, with its evidence and the next step: A stores and dependency chains (no miss and no front-end
  sign where both were measured), B miss-bound (a miss sign), C instruction-cache / front-end-bound (a
  front-end sign, no miss sign); or undecided, saying which counters were missing and why;
- what else the numbers say: multiplexed counts, a large miss ratio of a tiny count, misses that are
  mostly the kernel's (clearing fresh pages on page faults).

Thresholds are per 1k instructions where a rate per access would mislead (49.6% of iTLB loads missing is
nothing when there are 0.5 iTLB misses per million instructions). The study's own numbers
(tests/fixtures/perf_samples/hakmem_phase44_*) classify as it did: case A.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# A miss sign (case B): misses frequent enough to dominate a core that retires a few instructions a cycle.
MISS_SIGNS = (  # (rate key, threshold, words, the events it needs)
    ("cache_mpki", 5.0, "cache misses per 1k instructions", ("cache-misses", "instructions")),
    ("llc_mpki", 1.0, "LLC load misses per 1k instructions", ("LLC-load-misses", "instructions")),
    ("l1d_miss_rate", 0.10, "of L1d loads missing", ("L1-dcache-load-misses", "L1-dcache-loads")),
    ("dtlb_mpki", 1.0, "dTLB load misses per 1k instructions", ("dTLB-load-misses", "instructions")),
)
# A front-end sign (case C): the instruction side misses or the branch predictor fails often.
FRONT_END_SIGNS = (
    ("itlb_mpki", 0.5, "iTLB misses per 1k instructions", ("iTLB-load-misses", "instructions")),
    ("icache_mpki", 10.0, "L1-icache misses per 1k instructions", ("L1-icache-load-misses", "instructions")),
    ("branch_miss_rate", 0.05, "of branches mispredicted", ("branch-misses", "branches")),
)
# Events every PMU-less host counts (the kernel's software events): they make the tier 'software'.
SOFTWARE_EVENTS = frozenset({"task-clock", "cpu-clock", "context-switches", "cs", "cpu-migrations", "migrations",
                             "page-faults", "faults", "minor-faults", "major-faults", "alignment-faults",
                             "emulation-faults", "duration_time", "user_time", "system_time"})
RATE_KEYS = ("ipc", "cache_mpki", "cache_miss_rate", "llc_mpki", "l1d_mpki", "l1d_miss_rate", "dtlb_mpki",
             "dtlb_miss_rate", "itlb_mpki", "itlb_miss_rate", "icache_mpki", "branch_miss_rate")
MIN_FUNCTION_SAMPLES = 10
MISS_HEAVY = 2.0            # a function's miss share this many times its time share (or less than 1/this)
KERNEL_MISS_MAJORITY = 0.5  # the kernel holds this share of the miss samples or more: say so
TINY_RATIO = 0.10           # a miss ratio per access this large on a count under the sign's threshold: say so
TIME_EVENTS = frozenset({"cycles", "cpu-cycles", "cpu-clock", "task-clock", "ref-cycles"})
# Kernel functions that clear or charge the pages a process touches for the first time (page faults).
PAGE_CLEARING = ("clear_page", "clear_huge_page", "clear_subpage", "clear_user", "folio_zero", "zero_user")
PAGE_CHARGING = ("mem_cgroup", "memcg", "get_mem_cgroup")

CASE_NAMES = {"A": "A: store/dependency-bound", "B": "B: miss-bound", "C": "C: instruction-cache-bound"}


@dataclass(frozen=True)
class ProfileCheck:
    """One perf record profile measured against the sample-count rule."""
    event: str | None
    samples: int | None
    listed: int               # functions listed (groups such as '(kernel functions)' left out)
    ranked: int               # of them, with at least MIN_FUNCTION_SAMPLES samples
    verdict: str              # 'enough' | 'thin' | 'too thin' | 'unknown'
    text: str


@dataclass(frozen=True)
class FunctionRow:
    symbol: str
    dso: str | None
    kernel: bool
    time_share: float | None          # None: not in the time profile (time_share_below bounds it)
    time_share_below: float | None
    time_samples: float | None
    time_rank: str | None             # '1', '2=' (tied with a neighbour), None: not ranked (too few samples)
    miss_share: float | None
    miss_share_below: float | None
    miss_samples: float | None
    miss_rank: str | None
    miss_per_time: float | None       # miss share / time share, or the bound below
    ratio_bound: str | None           # None: measured; 'at least' or 'at most': one share is a bound
    mark: str | None                  # 'misses far above time' | 'time far above misses' | None


@dataclass(frozen=True)
class Classification:
    counter_tier: str                 # hardware | software | none
    case: str | None                  # 'A' | 'B' | 'C' | None (undecided)
    classification: str               # CASE_NAMES[case] or 'undecided: ...'
    evidence: tuple[str, ...]
    next_step: str
    undecided: str | None             # what the counters could not decide, and why
    noticed: tuple[str, ...]
    rates: dict[str, float | None]
    not_supported: tuple[str, ...]
    multiplexed: bool
    running_percent_min: float | None
    time_profile: ProfileCheck | None
    miss_profile: ProfileCheck | None
    miss_profile_note: str | None
    functions: tuple[FunctionRow, ...] = field(default_factory=tuple)


# ---- counters -----------------------------------------------------------------------------------------

def _base(name: str | None) -> str:
    """An event's name without PMU and modifiers: cpu_core/cycles/u and cycles:P are 'cycles'."""
    name = (name or "").strip()
    if name.count("/") >= 2:
        name = name.split("/")[1]
    return name.split(":")[0]


def counts(events: list[dict]) -> tuple[dict[str, float], dict[str, str]]:
    """Counted values by event name (hybrid PMUs' rows added up) and the state of every event not counted."""
    counted: dict[str, float] = {}
    missing: dict[str, str] = {}
    for event in events:
        name = _base(event.get("name") or event.get("event"))
        if event.get("running_percent") == 0 and event.get("state") == "counted":
            missing.setdefault(name, "not counted (it ran 0% of the time)")
        elif event.get("state") == "counted" and event.get("value") is not None:
            counted[name] = counted.get(name, 0.0) + float(event["value"])
        else:
            missing.setdefault(name, event.get("state") or "not counted")
    return counted, {name: state for name, state in missing.items() if name not in counted}


def rates(counted: dict[str, float]) -> dict[str, float | None]:
    def ratio(numerator: str, denominator: str, scale: float = 1.0) -> float | None:
        if numerator not in counted or not counted.get(denominator):
            return None
        return scale * counted[numerator] / counted[denominator]

    return {
        "ipc": ratio("instructions", "cycles"),
        "cache_mpki": ratio("cache-misses", "instructions", 1000),
        "cache_miss_rate": ratio("cache-misses", "cache-references"),
        "llc_mpki": ratio("LLC-load-misses", "instructions", 1000),
        "l1d_mpki": ratio("L1-dcache-load-misses", "instructions", 1000),
        "l1d_miss_rate": ratio("L1-dcache-load-misses", "L1-dcache-loads"),
        "dtlb_mpki": ratio("dTLB-load-misses", "instructions", 1000),
        "dtlb_miss_rate": ratio("dTLB-load-misses", "dTLB-loads"),
        "itlb_mpki": ratio("iTLB-load-misses", "instructions", 1000),
        "itlb_miss_rate": ratio("iTLB-load-misses", "iTLB-loads"),
        "icache_mpki": ratio("L1-icache-load-misses", "instructions", 1000),
        "branch_miss_rate": ratio("branch-misses", "branches"),
    }


def tier(counted: dict[str, float]) -> str:
    """hardware where the PMU counted any event, software where only the kernel's events counted, else none."""
    if set(counted) - SOFTWARE_EVENTS:
        return "hardware"
    return "software" if counted else "none"


def significant(value: float, digits: int = 3) -> str:
    """A number to `digits` significant figures, plain (0.000513, 49.6, 2.33, 16500000)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{round(value, decimals):.{decimals}f}"


def percent(share: float) -> str:
    """A share as people read it, to three significant figures at most: 63.4%, 2.57%, 0.21%, < 0.01%."""
    value = 100 * share
    if value == 0:
        return "0%"
    if value < 0.01:
        return "< 0.01%"
    return f"{_trimmed(significant(value, 3))}%"


def _trimmed(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _rate_words(key: str, value: float, threshold: bool = False) -> str:
    if key.endswith("_rate"):
        return percent(value)
    return _trimmed(significant(value)) if threshold else significant(value)


# ---- profiles ------------------------------------------------------------------------------------------

def is_time_event(event: str | None) -> bool:
    return _base(event) in TIME_EVENTS


def is_miss_event(event: str | None) -> bool:
    base = _base(event).lower()
    return "miss" in base


def _is_kernel(row: dict) -> bool:
    return row.get("space") in ("kernel", "guest kernel") or (row.get("dso") or "").startswith("[kernel")


def _samples_of(row: dict, total: int | None) -> float | None:
    if row.get("samples") is not None:
        return float(row["samples"])
    return None if total is None else row["share"] * total


def _functions(profile: dict) -> list[dict]:
    return [row for row in profile.get("functions") or [] if not row.get("group") and row.get("symbol")]


READ_SHARE = 0.01  # in a profile that lists every sample, the functions people read: 1% of the samples and up


def check_profile(profile: dict) -> ProfileCheck:
    """The sample-count rule on one profile: how many of its functions it can rank. A list cut to a top N (a
    write-up's, or perf's --percent-limit) must rank all it lists; a complete profile (every sample listed, the
    tail of one-sample functions included) must rank every function with at least READ_SHARE of the samples."""
    total = profile.get("samples")
    functions = _functions(profile)
    listed = len(functions)
    event = profile.get("event")
    if total is None:
        return ProfileCheck(event, None, listed, 0, "unknown",
                            f"{event or 'profile'}: no sample count given, so its functions cannot be ranked "
                            "(run perf report with -n or keep its '# Samples:' header)")
    approx = "about " if profile.get("samples_approximate") else ""
    counted = sorted(((_samples_of(row, total) or 0.0, row["share"]) for row in functions), reverse=True)
    ranked = sum(count >= MIN_FUNCTION_SAMPLES for count, _share in counted)
    complete = bool(profile.get("complete"))
    read = [share for _count, share in counted if share >= READ_SHARE] if complete else [share for _count, share in counted]
    read = read or [share for _count, share in counted[:1]]
    unranked_read = [share for count, share in counted if share in read and count < MIN_FUNCTION_SAMPLES]
    scope = (f"every function with at least {percent(READ_SHARE)} of the samples" if complete
             else f"each of the {listed} functions listed")
    rule = f"a function needs {MIN_FUNCTION_SAMPLES} samples for its share to be known within a factor of two"
    if not unranked_read and read:
        rest = f"; the other {listed - ranked} listed have fewer samples" if ranked < listed else ""
        return ProfileCheck(event, total, listed, ranked, "enough",
                            f"{approx}{total} samples: ranks the top {ranked} functions, {scope} ({rule}){rest}")
    smallest = min(unranked_read)
    need = (f"; about {math.ceil(round(MIN_FUNCTION_SAMPLES / smallest, 6)):,} samples would give the last of them "
            f"({percent(smallest)}) {MIN_FUNCTION_SAMPLES}") if smallest > 0 else ""
    verdict = "too thin" if ranked < 2 else "thin"
    head = "too thin to rank functions" if ranked < 2 else f"thin: ranks the top {ranked}, not {scope}"
    return ProfileCheck(event, total, listed, ranked, verdict, f"{approx}{total} samples, {head} ({rule}){need}")


def _ranks(profile: dict) -> dict[tuple, str]:
    """Rank text per function key: '1', '2=' where a neighbour is within sampling noise, none below the rule."""
    total = profile.get("samples")
    if total is None:
        return {}
    rows = sorted(_functions(profile), key=lambda row: -row["share"])
    counted = [(_key(row), _samples_of(row, total) or 0.0) for row in rows]
    counted = [(key, count) for key, count in counted if count >= MIN_FUNCTION_SAMPLES]
    ranks: dict[tuple, str] = {}
    rank = 0
    for index, (key, count) in enumerate(counted):
        if index == 0 or not _tied(counted[index - 1][1], count):
            rank = index + 1
        tied = (index > 0 and _tied(counted[index - 1][1], count)) or (
            index + 1 < len(counted) and _tied(count, counted[index + 1][1]))
        ranks[key] = f"{rank}{'=' if tied else ''}"
    return ranks


def _tied(larger: float, smaller: float) -> bool:
    return larger - smaller < 1.96 * math.sqrt(larger + smaller)


def _key(row: dict) -> tuple:
    return (row["symbol"],)


def _absent_bound(profile: dict) -> float | None:
    """The largest share a function the profile does not list can have: under one sample where every sample
    is listed, else under the smallest share listed."""
    functions = _functions(profile)
    if not functions:
        return None
    if profile.get("complete") and profile.get("samples"):
        return 1.0 / profile["samples"]
    return min(row["share"] for row in functions)


def function_table(time_profile: dict | None, miss_profile: dict | None) -> list[FunctionRow]:
    """Every function of either profile, time share beside miss share, most time first."""
    profiles = [profile for profile in (time_profile, miss_profile) if profile]
    if not profiles:
        return []
    time_rows = {_key(row): row for row in _functions(time_profile or {})}
    miss_rows = {_key(row): row for row in _functions(miss_profile or {})}
    time_ranks, miss_ranks = _ranks(time_profile or {}), _ranks(miss_profile or {})
    time_bound = _absent_bound(time_profile) if time_profile else None
    miss_bound = _absent_bound(miss_profile) if miss_profile else None
    out = []
    for key in dict.fromkeys([*time_rows, *miss_rows]):
        time_row, miss_row = time_rows.get(key), miss_rows.get(key)
        row = time_row or miss_row
        time_share = time_row["share"] if time_row else None
        miss_share = miss_row["share"] if miss_row else None
        time_samples = _samples_of(time_row, time_profile.get("samples")) if time_row else None
        miss_samples = _samples_of(miss_row, miss_profile.get("samples")) if miss_row else None
        ratio = bound = mark = None
        if miss_profile and time_profile:
            if time_share and miss_share is not None:
                ratio = miss_share / time_share
            elif miss_share and not time_row and time_bound:
                ratio, bound = miss_share / time_bound, "at least"
            elif time_share and not miss_row and miss_bound is not None:
                ratio, bound = miss_bound / time_share, "at most"
            if ratio is not None:
                if ratio >= MISS_HEAVY and bound != "at most" and (miss_samples or 0) >= MIN_FUNCTION_SAMPLES:
                    mark = "misses far above time"
                elif ratio <= 1 / MISS_HEAVY and bound != "at least" and (time_samples or 0) >= MIN_FUNCTION_SAMPLES:
                    mark = "time far above misses"
        out.append(FunctionRow(
            symbol=row["symbol"], dso=(time_row or {}).get("dso") or (miss_row or {}).get("dso"),
            kernel=_is_kernel(time_row or {}) or _is_kernel(miss_row or {}),
            time_share=time_share, time_share_below=time_bound if time_profile and not time_row else None,
            time_samples=time_samples, time_rank=time_ranks.get(key),
            miss_share=miss_share, miss_share_below=miss_bound if miss_profile and not miss_row else None,
            miss_samples=miss_samples, miss_rank=miss_ranks.get(key),
            miss_per_time=ratio, ratio_bound=bound, mark=mark))
    return sorted(out, key=lambda row: (-(row.time_share or 0), -(row.miss_share or 0), row.symbol))


# ---- the case --------------------------------------------------------------------------------------------

def _signs(rate: dict[str, float | None], signs: tuple, counted: dict[str, float], missing: dict[str, str]
           ) -> tuple[list[str], list[str], list[str]]:
    """(present signs in words, absent ones in words, the ones that could not be measured and why)."""
    present, absent, unmeasured = [], [], []
    for key, threshold, words, needs in signs:
        value = rate.get(key)
        if value is None:
            why = ", ".join(f"{event} {missing.get(event, 'not requested')}" for event in needs if event not in counted)
            unmeasured.append(f"{words.removeprefix('of ')} ({why or 'a zero denominator'})")
        elif value >= threshold:
            present.append(f"{_rate_words(key, value)} {words} (a sign from {_rate_words(key, threshold, True)})")
        else:
            absent.append(f"{_rate_words(key, value)} {words} (under {_rate_words(key, threshold, True)})")
    return present, absent, unmeasured


def _names(rows: list[FunctionRow], count: int = 3) -> str:
    return ", ".join(row.symbol for row in rows[:count])


def classify(events: list[dict] | None, time_profile: dict | None = None, miss_profile: dict | None = None, *,
             failed: str | None = None, tier_reason: str | None = None, miss_profile_note: str | None = None
             ) -> Classification:
    """The case of one workload from its perf stat events and its time and miss profiles (either may be
    None: `miss_profile_note` says why a miss profile is missing). `failed`: why the workload failed (it is
    then not classified); `tier_reason`: why perf counts what it counts on the host (the facts' probe)."""
    counted, missing = counts(events or [])
    counter_tier = tier(counted)
    rate = rates(counted)
    not_supported = tuple(sorted(missing))
    running = [float(event["running_percent"]) for event in events or []
               if event.get("state") == "counted" and event.get("running_percent")]
    multiplexed = any(value < 100 for value in running)
    functions = function_table(time_profile, miss_profile)
    time_check = check_profile(time_profile) if time_profile else None
    miss_check = check_profile(miss_profile) if miss_profile else None
    if miss_profile is None and miss_profile_note is None and time_profile is not None:
        miss_profile_note = "no miss profile was recorded"
    noticed = _noticed(rate, running, multiplexed, miss_profile, functions)
    miss_present, miss_absent, miss_unmeasured = _signs(rate, MISS_SIGNS, counted, missing)
    front_present, front_absent, front_unmeasured = _signs(rate, FRONT_END_SIGNS, counted, missing)
    evidence: list[str] = []
    if rate["ipc"] is not None:
        evidence.append(f"IPC {significant(rate['ipc'])}")
    why_not = f" ({tier_reason})" if tier_reason else ""
    common = dict(counter_tier=counter_tier, rates=rate, not_supported=not_supported, multiplexed=multiplexed,
                  running_percent_min=min(running) if running else None, time_profile=time_check,
                  miss_profile=miss_check, miss_profile_note=miss_profile_note, functions=tuple(functions),
                  noticed=tuple(noticed))
    if failed:
        return Classification(case=None, classification="undecided: the workload failed",
                              evidence=(failed,), next_step="Make the command run to completion first; its counts "
                              "are kept but not read.", undecided="the workload failed", **common)
    if "instructions" not in counted:
        what = _missing_words(missing) or ("instructions not requested" if counted else "no perf stat output")
        undecided = (f"could not decide between A, B and C: no instruction count, so no rate per instruction "
                     f"(counter tier {counter_tier}{why_not}; {what})")
        time_note = _time_note(functions, time_check)
        return Classification(case=None, classification="undecided: counters unavailable",
                              evidence=tuple(evidence + ([time_note] if time_note else [])),
                              next_step=("Where the time goes is in the function table (the time profile "
                                         "needs no PMU). To classify, run on a host whose perf counts cycles, "
                                         "instructions and cache misses: bare metal, or a VM with a virtual PMU."),
                              undecided=undecided, **common)
    hot = [row for row in functions if row.time_share is not None][:3]
    heavy = [row for row in functions if row.mark == "misses far above time" and not row.kernel]
    light = [row for row in functions if row.mark == "time far above misses"]
    if miss_present:
        evidence += miss_present + front_present
        where = (f" Start with the functions whose share of the misses is far above their share of the time: "
                 f"{_names(heavy)}.") if heavy else (f" Start with the hottest functions: {_names(hot)}." if hot else "")
        tlb = rate.get("dtlb_mpki") is not None and rate["dtlb_mpki"] >= MISS_SIGNS[3][1]
        pages_first = "huge pages for the data (THP madvise) first, as dTLB misses lead; then " if tlb else ""
        step = ("Cut the misses: " + pages_first + "a data layout that keeps what is used together on the same lines "
                "(fewer pointers per item, structures of arrays), software prefetch or an access order the "
                "hardware prefetcher follows, a smaller working set." + where)
        return Classification(case="B", classification=CASE_NAMES["B"], evidence=tuple(evidence), next_step=step,
                              undecided=_partly(miss_unmeasured + front_unmeasured), **common)
    if front_present:
        evidence += front_present + miss_absent
        step = ("Shrink and straighten the hot code path: profile-guided optimisation and LTO, hot/cold splitting "
                "(BOLT), huge pages for the text where iTLB misses lead, fewer unpredictable branches where branch "
                "misses lead" + (f"; the hottest functions are {_names(hot)}." if hot else "."))
        return Classification(case="C", classification=CASE_NAMES["C"], evidence=tuple(evidence), next_step=step,
                              undecided=_partly(miss_unmeasured + front_unmeasured), **common)
    if miss_absent and front_absent:
        evidence += miss_absent + front_absent
        if light:
            ratios = [1 / row.miss_per_time for row in light if row.miss_per_time]
            evidence.append(f"the functions taking the time hold far less of the misses: {_names(light)} "
                            f"({significant(min(ratios), 2)}-{significant(max(ratios), 2)} times more of the time "
                            "than of the misses)")
        step = ("Look at store-to-load forwarding and dependency chains in the functions that take the time"
                + (f" ({_names(hot)})" if hot else "") + ": perf annotate them for chains of dependent loads and "
                "stores to the same addresses, and count store-forwarding blocks where the PMU has them (Intel "
                "ld_blocks.store_forward, AMD ls_stlf_*). Prefetching or a new data layout will not help here: "
                "misses are not what the time is spent on.")
        if miss_profile is None:
            step += f" (No miss profile to confirm it by function: {miss_profile_note}.)"
        return Classification(case="A", classification=CASE_NAMES["A"], evidence=tuple(evidence), next_step=step,
                              undecided=_partly(miss_unmeasured + front_unmeasured), **common)
    evidence += miss_absent + front_absent
    unmeasured = (["no miss rate: " + "; ".join(miss_unmeasured)] if not miss_absent else []) + (
        ["no front-end rate: " + "; ".join(front_unmeasured)] if not front_absent else [])
    undecided = (f"could not decide: no sign among what was counted, and {' and '.join(unmeasured)}"
                 f" (counter tier {counter_tier}{why_not})")
    return Classification(case=None, classification="undecided: counters unavailable", evidence=tuple(evidence),
                          next_step="Count the missing events (perf stat -e with the study's counter set) on a host "
                                    "whose PMU has them.", undecided=undecided, **common)


def _missing_words(missing: dict[str, str], shown: int = 4) -> str:
    """The events perf could not count, the deciding ones first: 'cycles not supported, instructions not
    supported, cache-misses not supported and 15 more not supported'."""
    first = ("cycles", "instructions", "cache-misses", "LLC-load-misses")
    names = sorted(missing, key=lambda name: (name not in first, first.index(name) if name in first else 0, name))
    words = [f"{name} {missing[name]}" for name in names[:shown]]
    rest = names[shown:]
    if rest:
        states = sorted({missing[name] for name in rest})
        words.append(f"{len(rest)} more {' or '.join(states)} ({', '.join(rest)})")
    return ", ".join(words)


def _partly(unmeasured: list[str]) -> str | None:
    if not unmeasured:
        return None
    return f"not measured: {'; '.join(unmeasured)}; the case rests on the rest"


def _time_note(functions: list[FunctionRow], check: ProfileCheck | None) -> str | None:
    timed = [row for row in functions if row.time_share is not None]
    if not timed or check is None:
        return None
    top = "; ".join(f"{row.symbol} {percent(row.time_share)}" for row in timed[:3])
    return f"time profile ({check.event}): {top}"


def _noticed(rate: dict, running: list[float], multiplexed: bool, miss_profile: dict | None,
             functions: list[FunctionRow]) -> list[str]:
    noticed = []
    if multiplexed:
        low, high = min(running), max(running)
        span = f"{significant(low)}%" if round(low, 1) == round(high, 1) else \
            f"{significant(low)}-{significant(high)}%"
        noticed.append(f"counters multiplexed: each event counted {span} of the time, so every count is perf's "
                       "scaled estimate")
    for ratio_key, mpki_key, event, threshold in (("itlb_miss_rate", "itlb_mpki", "iTLB", FRONT_END_SIGNS[0][1]),
                                                  ("dtlb_miss_rate", "dtlb_mpki", "dTLB", MISS_SIGNS[3][1])):
        ratio, mpki = rate.get(ratio_key), rate.get(mpki_key)
        if ratio is not None and mpki is not None and ratio >= TINY_RATIO and mpki < threshold:
            noticed.append(f"{event} misses are {percent(ratio)} of {event} loads but {significant(mpki, 2)} per 1k "
                           f"instructions: a large ratio of a tiny count, not a sign of trouble")
    if miss_profile:
        total = sum(row["share"] for row in _functions(miss_profile))
        kernel = [row for row in functions if row.kernel and row.miss_share]
        kernel_share = sum(row.miss_share for row in kernel)
        if total and kernel_share >= KERNEL_MISS_MAJORITY:
            clearing = [row for row in kernel if row.symbol.startswith(PAGE_CLEARING)]
            charging = [row for row in kernel if any(word in row.symbol for word in PAGE_CHARGING)]
            user = sum(row.miss_share for row in functions if not row.kernel and row.miss_share)
            parts = [f"{row.symbol} {percent(row.miss_share)}" for row in (clearing + charging)[:3]]
            what = ("the kernel clearing fresh pages on page faults"
                    + (" and charging them to the memory cgroup" if charging else "")) if clearing else \
                "kernel functions"
            noticed.append(
                f"{percent(kernel_share)} of the {miss_profile.get('event') or 'miss'} samples are in the kernel, "
                f"most of them {what}" + (f" ({'; '.join(parts)})" if parts else "")
                + f"; the program's own functions hold {percent(user)}. These misses come from memory touched for "
                "the first time, not from the program's data structures: reusing memory instead of returning it to "
                "the kernel, or pre-faulting it (MAP_POPULATE, huge pages), removes them")
    return noticed
