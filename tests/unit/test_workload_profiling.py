"""Workload profiling the allocator study's way (fleetscope.analyze.profiling): on the study's own recorded
output (tests/fixtures/perf_samples/hakmem_phase44_*, SOURCES.md there says what it concluded), on the other
real perf outputs beside it, and on synthetic counts and profiles whose answer is known by construction."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from fleetscope.analyze.profiling import (FRONT_END_SIGNS, MIN_FUNCTION_SAMPLES, MISS_SIGNS, check_profile, classify,
                                          counts, function_table, percent)
from fleetscope.ingest.parsers import ParseError, perf, perf_report

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "perf_samples"


def read(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def study():
    stat = perf.parse(read("hakmem_phase44_perf_stat.txt"), "stat")
    (cycles,) = perf_report.parse(read("hakmem_phase44_perf_record_top20_cycles.txt"))["profiles"]
    (misses,) = perf_report.parse(read("hakmem_phase44_perf_record_top12_cache_misses.txt"))["profiles"]
    return stat, cycles, misses


# ---- the parsers on the study's text ---------------------------------------------------------------------

def test_perf_stat_human_output_reads_every_row_with_multiplexing_and_not_supported(study):
    stat, _, _ = study
    assert stat["format"] == "human" and stat["command"] == "./bench_random_mixed_hakmem_minimal 200000000 400 1"
    assert (stat["elapsed_s"], stat["user_s"], stat["sys_s"]) == (4.21942558, 4.202193, 0.017)
    events = {event["name"]: event for event in stat["events"]}
    assert len(events) == 14
    assert (events["cycles"]["value"], events["cycles"]["running_percent"], events["cycles"]["multiplexed"]) == (
        16523264313, 41.6, True)
    assert (events["instructions"]["value"], events["instructions"]["metric_value"],
            events["instructions"]["metric_unit"]) == (38458485670, 2.33, "insn per cycle")
    assert events["cache-misses"]["metric_unit"] == "of all cache refs"
    assert events["LLC-loads"]["state"] == events["LLC-load-misses"]["state"] == "not supported"
    assert events["LLC-load-misses"]["value"] is None  # never a zero
    assert perf.rows(stat)[0] == {"metric": "cycles", "value": 16523264313, "unit": "count",
                                  "params": {"running_percent": 41.6}}


def test_perf_stat_human_output_with_repeats_and_units_as_perf_6_prints_it():
    text = ("\n Performance counter stats for 'sha256sum /usr/bin/perf' (3 runs):\n\n"
            "             43.38 msec task-clock                       #    0.431 CPUs utilized            ( +- 11.87% )\n"
            "   <not supported>      cycles                                                      \n"
            "                85      page-faults                      #    2.569 K/sec                    ( +-  0.68% )\n"
            "\n           0.10077 +- 0.00872 seconds time elapsed  ( +-  8.65% )\n")
    parsed = perf.parse(text, "dev-vm")
    clock, cycles, faults = parsed["events"]
    assert (clock["name"], clock["value"], clock["unit"], clock["variance_percent"], clock["metric_value"]) == (
        "task-clock", 43.38, "msec", 11.87, 0.431)
    assert cycles["state"] == "not supported" and faults["value"] == 85 and parsed["elapsed_s"] == 0.10077


def test_a_human_row_perf_stat_cannot_have_is_refused_with_its_line():
    with pytest.raises(ParseError, match=r"x:3: .*expected a perf stat row"):
        perf.parse(" Performance counter stats for 'true':\n\n  12 two words here\n", "x")


def test_the_ranked_lists_give_shares_kernel_functions_and_the_sample_counts(study):
    _, cycles, misses = study
    assert (cycles["event"], cycles["samples"], cycles["samples_approximate"], cycles["event_count"]) == (
        "cycles:P", 423, False, 15964103056)
    assert [row["symbol"] for row in cycles["functions"][:3]] == ["malloc", "free", "main"]
    assert cycles["functions"][0]["share"] == pytest.approx(0.2856)
    group = cycles["functions"][-1]
    assert (group["symbol"], group["group"], group["approximate"], group["space"]) == (
        "(kernel functions)", True, True, "kernel")
    assert misses["samples"] == 403 and not misses["complete"]
    clear = misses["functions"][0]
    assert (clear["symbol"], clear["space"], clear["share"]) == ("clear_page_erms", "kernel", pytest.approx(0.6336))


def test_perf_reports_own_output_recorded_here_counts_every_sample():
    (profile,) = perf_report.parse(read("devvm_python_cpu_clock.perf-report.txt"))["profiles"]
    assert (profile["event"], profile["samples"], profile["complete"]) == ("cpu-clock", 333, True)
    assert sum(row["samples"] for row in profile["functions"]) == 333
    first = profile["functions"][0]
    assert (first["dso"], first["space"], first["symbol"], first["samples"]) == (
        "[kernel.kallsyms]", "kernel", "clear_page_erms", 35)


def test_perf_report_with_several_events_rounded_counts_and_trailing_columns():
    text = ("# Samples: 4K of event 'cycles'\n# Event count (approx.): 1,000\n"
            "    60.00%   2400  app  [.] walk   -   -\n    40.00%   1600  libc.so.6  [.] malloc\n"
            "# Samples: 1K of event 'cache-misses'\n"
            "    90.00%    900  app  [.] walk\n    10.00%    100  [kernel.kallsyms]  [k] clear_page_rep\n")
    cycles, misses = perf_report.parse(text)["profiles"]
    assert (cycles["samples"], cycles["samples_approximate"], cycles["functions"][0]["symbol"]) == (4000, False, "walk")
    assert (misses["event"], misses["samples"], misses["functions"][1]["space"]) == ("cache-misses", 1000, "kernel")


def test_perf_report_refuses_a_row_without_a_symbol_marker_and_names_the_line():
    with pytest.raises(ParseError, match=r"r:2: no '\[\.\]' or '\[k\]'"):
        perf_report.parse("# Samples: 10 of event 'cycles'\n   50.00%  app  walk\n", "r")
    with pytest.raises(ParseError, match=r"r:1: no perf report rows|r:1: expected a perf report row"):
        perf_report.parse("hello\n", "r")


def test_perf_report_reads_hostile_long_lines_in_one_pass():
    dashes = "    1.00%  app  [.] f" + " -" * 200_000 + "\n"
    (profile,) = perf_report.parse(dashes)["profiles"]
    assert profile["functions"][0]["symbol"] == "f"
    with pytest.raises(ParseError, match="at most 1024"):
        perf_report.parse("    1.00%  app  [.] " + "x" * 5000 + "\n")


def test_looks_like_tells_a_profile_from_perf_stat():
    assert perf_report.looks_like(read("hakmem_phase44_perf_record_top20_cycles.txt"))
    assert perf_report.looks_like(read("devvm_python_cpu_clock.perf-report.txt"))
    assert not perf_report.looks_like(read("hakmem_phase44_perf_stat.txt"))
    assert not perf_report.looks_like(read("rpl_i9-13900KF_hybrid_saxpy.perf.csv"))


# ---- the study's conclusion from its own numbers ---------------------------------------------------------

def test_the_study_classifies_as_the_study_did(study):
    stat, cycles, misses = study
    case = classify(stat["events"], cycles, misses)
    assert (case.case, case.classification, case.counter_tier) == ("A", "A: store/dependency-bound", "hardware")
    assert case.rates["ipc"] == pytest.approx(38458485670 / 16523264313)
    assert case.rates["cache_miss_rate"] == pytest.approx(0.0097, abs=5e-5)
    assert "IPC 2.33" in case.evidence
    assert any("cache misses per 1k instructions (under 5)" in line for line in case.evidence)
    assert "store-to-load forwarding and dependency chains" in case.next_step
    assert "Prefetching or a new data layout will not help" in case.next_step
    # The study's "20-128 times more of the time than of the misses" in the hot allocator functions:
    assert any("20-128 times more of the time than of the misses" in line for line in case.evidence)
    assert "LLC-load-misses not supported" in case.undecided
    assert case.multiplexed and case.running_percent_min == 41.6


def test_fleetscope_notices_the_kernel_clearing_fresh_pages(study):
    stat, cycles, misses = study
    case = classify(stat["events"], cycles, misses)
    (kernel,) = [note for note in case.noticed if "in the kernel" in note]
    assert kernel.startswith("93.5% of the cache-misses samples are in the kernel, most of them the kernel clearing "
                             "fresh pages on page faults and charging them to the memory cgroup")
    assert "clear_page_erms 63.4%" in kernel and "program's own functions hold 3.54%" in kernel
    assert any(note.startswith("iTLB misses are 49.6% of iTLB loads but 0.00051 per 1k") for note in case.noticed)
    assert any("counted 41.6-41.7% of the time" in note for note in case.noticed)


def test_the_study_profiles_are_thin_for_a_top_twenty(study):
    _, cycles, misses = study
    time_check, miss_check = check_profile(cycles), check_profile(misses)
    assert (time_check.samples, time_check.listed, time_check.ranked, time_check.verdict) == (423, 19, 7, "thin")
    assert (miss_check.samples, miss_check.listed, miss_check.ranked, miss_check.verdict) == (403, 12, 3, "thin")
    assert "thin: ranks the top 7, not each of the 19 functions listed" in time_check.text
    assert "about 4,762 samples would give the last of them (0.21%) 10" in time_check.text


def test_the_function_table_marks_misses_far_above_time_and_the_reverse(study):
    stat, cycles, misses = study
    rows = {row.symbol: row for row in classify(stat["events"], cycles, misses).functions}
    clear = rows["clear_page_erms"]
    assert clear.kernel and clear.time_share is None and clear.time_share_below == pytest.approx(0.0021)
    assert clear.ratio_bound == "at least" and clear.miss_per_time == pytest.approx(0.6336 / 0.0021)
    assert clear.mark == "misses far above time" and clear.miss_rank == "1"
    malloc = rows["malloc"]
    assert malloc.miss_per_time == pytest.approx(0.0108 / 0.2856) and malloc.mark == "time far above misses"
    assert malloc.time_rank == rows["free"].time_rank == rows["main"].time_rank == "1="  # within sampling noise
    # too few samples to rank, and too few to mark either way
    assert rows["tiny_c7_ultra_free"].time_rank is None and rows["tiny_c7_ultra_free"].mark is None
    absent = rows["mid_inuse_dec_deferred"]
    assert absent.miss_share is None and absent.ratio_bound == "at most" and absent.mark is None
    assert "(kernel functions)" not in rows


# ---- the other real perf outputs -----------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "case"), [
    ("tgl_i5-1135G7_wsl2_saxpy_local.perf.csv", "B"),      # 107 cache misses per 1k instructions, IPC 0.41
    ("tgl_i5-1135G7_wsl2_saxpy_tlb_huge.perf.csv", "B"),
    ("tgl_i5-1135G7_wsl2_raw_stride1024.perf.csv", "B"),
    ("tgl_i5-1135G7_wsl2_smt_perf.csv", "B"),
    ("tgl_i5-1135G7_wsl2_affinity_user_events_not_supported.csv", "A"),
    ("rpl_i9-13900KF_hybrid_saxpy.perf.csv", None),         # no instruction count: undecided
])
def test_the_other_perf_samples_classify_from_what_they_counted(name, case):
    result = classify(perf.parse(read(name))["events"])
    assert result.case == case, (result.classification, result.evidence, result.undecided)
    if case is None:
        assert result.classification == "undecided: counters unavailable"
        assert "no instruction count" in result.undecided
        assert result.counter_tier == "hardware" and result.rates["cache_mpki"] is None


def test_hybrid_rows_add_up_and_a_pmu_that_ran_no_time_counts_nothing():
    counted, missing = counts(perf.parse(read("rpl_i9-13900KF_hybrid_saxpy.perf.csv"))["events"])
    assert counted["cache-misses"] == 167794821  # the atom PMU ran 0% of the time: its 54812818 is not a count
    assert counted["L1-dcache-load-misses"] == 98211830
    assert "L1-dcache-load-misses" not in missing


# ---- synthetic cases with a known answer --------------------------------------------------------------------

def stat_events(**values) -> list[dict]:
    """perf stat events: a keyword per event (dashes as underscores), a number or 'not supported'."""
    events = []
    for key, value in values.items():
        name = key.replace("_", "-")
        if value == "not supported":
            events.append({"name": name, "state": "not supported", "value": None, "running_percent": None})
        else:
            events.append({"name": name, "state": "counted", "value": value, "running_percent": 100.0})
    return events


def full_counters(ipc=1.5, instructions=1e10, cache_mpki=0.5, l1d_rate=0.02, dtlb_mpki=0.05, itlb_mpki=0.01,
                  icache_mpki=1.0, branch_rate=0.01, llc_mpki=0.1) -> list[dict]:
    k = instructions / 1000
    return stat_events(cycles=instructions / ipc, instructions=instructions, cache_references=cache_mpki * k * 10,
                       cache_misses=cache_mpki * k, LLC_load_misses=llc_mpki * k, L1_dcache_loads=instructions / 3,
                       L1_dcache_load_misses=l1d_rate * instructions / 3, dTLB_load_misses=dtlb_mpki * k,
                       iTLB_load_misses=itlb_mpki * k, L1_icache_load_misses=icache_mpki * k,
                       branches=instructions / 6, branch_misses=branch_rate * instructions / 6)


def profile(event: str, shares: dict[str, float], samples: int, kernel: tuple[str, ...] = ()) -> dict:
    functions = [{"share": share, "samples": round(share * samples), "dso": "[kernel.kallsyms]" if name in kernel
                  else "app", "space": "kernel" if name in kernel else "user", "symbol": name, "approximate": False,
                  "group": False} for name, share in sorted(shares.items(), key=lambda item: -item[1])]
    return {"event": event, "samples": samples, "samples_approximate": False, "functions": functions,
            "listed_share": sum(shares.values()), "complete": True}


def test_a_miss_bound_workload_is_case_b_and_points_at_the_function_whose_misses_exceed_its_time():
    time = profile("cycles", {"walk": 0.30, "churn": 0.60, "other": 0.10}, 20_000)
    misses = profile("cache-misses", {"walk": 0.85, "churn": 0.10, "other": 0.05}, 5_000)
    case = classify(full_counters(ipc=0.35, cache_mpki=25), time, misses)
    assert case.case == "B" and case.classification == "B: miss-bound"
    assert any("25.0 cache misses per 1k instructions (a sign from 5)" in line for line in case.evidence)
    assert "walk" in case.next_step and "huge pages" not in case.next_step
    rows = {row.symbol: row for row in case.functions}
    assert rows["walk"].mark == "misses far above time" and rows["walk"].miss_per_time == pytest.approx(0.85 / 0.30)
    assert rows["churn"].mark == "time far above misses"


def test_dtlb_misses_lead_to_huge_pages_first():
    case = classify(full_counters(ipc=0.5, dtlb_mpki=4.0))
    assert case.case == "B" and "huge pages for the data (THP madvise) first" in case.next_step


@pytest.mark.parametrize("front", [dict(itlb_mpki=2.0), dict(icache_mpki=30.0), dict(branch_rate=0.12)])
def test_an_instruction_side_sign_without_a_miss_sign_is_case_c(front):
    case = classify(full_counters(ipc=0.8, **front))
    assert case.case == "C" and "BOLT" in case.next_step


def test_no_sign_where_both_sides_were_measured_is_case_a():
    case = classify(full_counters(ipc=2.5))
    assert case.case == "A" and case.undecided is None
    assert len(case.evidence) == 1 + len(MISS_SIGNS) + len(FRONT_END_SIGNS)


def test_without_a_pmu_the_time_profile_stands_and_every_miss_figure_says_not_supported():
    events = stat_events(task_clock=812.5, context_switches=14, cpu_migrations=2, page_faults=30_000,
                         cycles="not supported", instructions="not supported", cache_misses="not supported")
    time = profile("cpu-clock", {"walk_blocks": 0.55, "churn_blocks": 0.30, "clear_page_erms": 0.15}, 2_000,
                   kernel=("clear_page_erms",))
    case = classify(events, time, None, tier_reason="hardware events are not supported (a VM without a virtual PMU)",
                    miss_profile_note="not supported: cache-misses cannot be sampled here")
    assert (case.counter_tier, case.case, case.classification) == ("software", None, "undecided: counters unavailable")
    assert "could not decide between A, B and C" in case.undecided
    assert "a VM without a virtual PMU" in case.undecided and "cache-misses not supported" in case.undecided
    assert all(value is None for value in case.rates.values())  # no zero stands for a count perf could not make
    assert case.not_supported == ("cache-misses", "cycles", "instructions")
    assert any(line.startswith("time profile (cpu-clock): walk_blocks 55%") for line in case.evidence)
    assert case.miss_profile is None and case.miss_profile_note.startswith("not supported")
    assert all(row.miss_share is None and row.miss_per_time is None and row.mark is None for row in case.functions)
    assert case.time_profile.verdict == "enough"


def test_hardware_without_front_end_counters_says_what_it_could_not_decide():
    events = [event for event in full_counters(ipc=2.0) if event["name"] not in
              ("iTLB-load-misses", "L1-icache-load-misses", "branches", "branch-misses")]
    case = classify(events)
    assert case.case is None and "no front-end rate" in case.undecided and "iTLB-load-misses not requested" \
        in case.undecided


def test_a_failed_workload_is_not_classified():
    case = classify(full_counters(ipc=0.2, cache_mpki=40), failed="exit status 3")
    assert case.case is None and case.classification == "undecided: the workload failed"


def test_the_sample_rule_ranks_only_what_the_samples_resolve():
    shares = {f"f{index}": share for index, share in enumerate((0.40, 0.30, 0.20, 0.05, 0.03, 0.02))}
    thin = check_profile(profile("cycles", shares, 100))      # 5, 3, 2 samples for the last three
    assert (thin.ranked, thin.verdict) == (3, "thin") and "ranks the top 3, not every function with at least 1%" \
        in thin.text
    assert check_profile(profile("cycles", shares, 20)).verdict == "too thin"  # 8, 6, 4 ...: none reach 10
    assert check_profile(profile("cycles", shares, 600)).verdict == "enough"   # the last has 12


def test_a_complete_profile_is_judged_on_the_functions_people_read_not_its_one_sample_tail():
    """perf report lists every sampled function, dozens with one sample: the rule asks that every function with
    1% of the samples or more be ranked, as the dev VM's 2,531-sample profile of the reference workload is."""
    shares = {"walk": 0.445, "churn": 0.277, "free": 0.075, "alloc": 0.025, **{f"k{index}": 0.0004 for index in range(40)}}
    check = check_profile(profile("cpu-clock", shares, 2531))
    assert check.verdict == "enough" and check.ranked == 4 and check.listed == 44
    assert "ranks the top 4 functions, every function with at least 1% of the samples" in check.text
    assert "the other 40 listed have fewer samples" in check.text
    cut = dict(profile("cpu-clock", shares, 2531), complete=False)  # the same rows as a top-N list: all must rank
    assert check_profile(cut).verdict == "thin"


def test_ranks_tie_within_poisson_noise_and_separate_beyond_it():
    rows = {row.symbol: row for row in function_table(profile("cycles", {"a": 0.52, "b": 0.48}, 1_000), None)}
    assert rows["a"].time_rank == rows["b"].time_rank == "1="            # 520 vs 480: 40 < 1.96 sqrt(1000)
    rows = {row.symbol: row for row in function_table(profile("cycles", {"a": 0.52, "b": 0.48}, 100_000), None)}
    assert (rows["a"].time_rank, rows["b"].time_rank) == ("1", "2")       # 4000 > 1.96 sqrt(100000)


def test_a_hot_miss_function_is_found_in_random_profiles_once_it_has_the_samples():
    """Generalisation: random function mixes, a planted function whose miss share is k x its time share; multinomial
    samples drawn from both. It is marked whenever its miss samples reach the rule's minimum and k >= 3, and never
    marked the other way."""
    generator = random.Random(31)
    checked = 0
    for _ in range(200):
        names = [f"fn{index}" for index in range(generator.randint(3, 12))]
        weights = [generator.random() for _ in names]
        time_shares = {name: weight / sum(weights) for name, weight in zip(names, weights)}
        planted = generator.choice(names)
        factor = generator.choice([3.0, 5.0, 20.0])
        miss_weights = {name: share * (factor if name == planted else 1.0) for name, share in time_shares.items()}
        miss_shares = {name: weight / sum(miss_weights.values()) for name, weight in miss_weights.items()}
        samples = generator.choice([200, 2_000, 20_000])
        drawn_time = _draw(generator, time_shares, samples)
        drawn_miss = _draw(generator, miss_shares, samples)
        rows = {row.symbol: row for row in function_table(profile("cycles", drawn_time, samples),
                                                          profile("cache-misses", drawn_miss, samples))}
        row = rows.get(planted)
        true_ratio = miss_shares[planted] / time_shares[planted]
        if row is None or row.miss_samples is None:
            continue
        assert row.mark != "time far above misses"
        if row.miss_samples >= 4 * MIN_FUNCTION_SAMPLES and row.time_samples and row.time_samples >= 40 \
                and true_ratio >= 2.5:
            assert row.mark == "misses far above time", (planted, factor, samples, row)
            checked += 1
    assert checked >= 50  # the rule was put to the test, not skipped


def _draw(generator: random.Random, shares: dict[str, float], samples: int) -> dict[str, float]:
    names = list(shares)
    counts_drawn = dict.fromkeys(names, 0)
    for name in generator.choices(names, weights=[shares[name] for name in names], k=samples):
        counts_drawn[name] += 1
    return {name: count / samples for name, count in counts_drawn.items() if count}


def test_percent_prints_no_more_precision_than_it_has():
    assert [percent(value) for value in (0.6336, 0.0257, 0.0021, 0.00005, 0.0)] == [
        "63.4%", "2.57%", "0.21%", "< 0.01%", "0%"]
