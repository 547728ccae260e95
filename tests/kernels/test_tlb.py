"""Tests for the `tlb` kernel of fleetscope-kernels, run as a subprocess (fixtures in conftest.py).

The thresholds come from runs on the 2-vCPU Zen 4 development VM (4 KiB pages): the tlb chain
equals the control up to 64 pages, is ~2.7x the control from 65 pages (L1 DTLB miss, L2 TLB hit,
+7 cycles), 1.8-4x at 2048 and 4-5x at 8192 pages (page walks). Other engineers run benchmarks on the same VM, so
ordering checks use each chain's minimum (docs/methods.md: the per-point minimum for inference) and
leave room for noise."""

import math
import os
import statistics

import pytest

from kernelrun import QUICK, parse_lines

HUGE = 2 << 20
NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"

TOP_KEYS = {"schema_version", "experiment", "kernel", "metric", "unit", "params",
            "samples", "summary", "context"}
PARAM_KEYS = {"pages", "page_bytes", "page_size", "page_stride_bytes", "chain", "working_set_bytes", "lines_touched",
              "huge_bytes_granted", "huge_granted", "cpu", "accesses_per_sample", "seed"}
SUMMARY_KEYS = {"min", "median", "mean", "ci95_low", "ci95_high", "count"}
CONTEXT_KEYS = {"precision", "counters", "canary_before_ns", "canary_after_ns", "core_clock_ghz",
                "median_cycles", "wall_s", "order_index"}
PAIRED_KEYS = {"paired_difference_median_ns", "paired_difference_min_ns"}


def tlb_records(run, *args):
    result = run("tlb", *args)
    assert result.returncode == 0, result.stderr
    return parse_lines(result.stdout)


def pairs(records):
    """{pages: {"tlb": record, "control": record}}."""
    by_pages = {}
    for record in records:
        chains = by_pages.setdefault(record["params"]["pages"], {})
        assert record["params"]["chain"] not in chains
        chains[record["params"]["chain"]] = record
    assert all(set(chains) == {"tlb", "control"} for chains in by_pages.values())
    return by_pages


def measured_pages(records):
    return [r["params"]["pages"] for r in records if r["params"]["chain"] == "tlb"]


def min_ratio(pair):
    return pair["tlb"]["summary"]["min"] / pair["control"]["summary"]["min"]


def meminfo():
    values = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            values[key] = int(value.split()[0])
    return values


def free_2m_pages():
    info = meminfo()
    if info.get("Hugepagesize") != 2048:
        pytest.skip("the default huge page size is not 2 MiB")
    return info["HugePages_Free"] - info["HugePages_Rsvd"]


@pytest.fixture(scope="module")
def contract_run(run):
    result = run("tlb", "--pages", "16,64", "--samples", "3", "--min-sample-ms", "2",
                 "--seed", "11")
    assert result.returncode == 0, result.stderr
    return {"result": result, "records": parse_lines(result.stdout)}


@pytest.fixture(scope="module")
def sanity_4k(run):
    """4 KiB pages inside the L1 DTLB (16, 32), past it (128), near the L2 TLB (2048) and far
    beyond it (8192), measured for real. Many short samples: on a shared machine a 0.5 ms
    sample usually runs untouched, so each chain's minimum stays clean."""
    result = run("tlb", "--pages", "16,32,128,2048,8192", "--page-size", "4k",
                 "--samples", "21", "--min-sample-ms", "0.5", "--seed", "5")
    assert result.returncode == 0, result.stderr
    return pairs(parse_lines(result.stdout))


def test_list_names_tlb(run):
    result = run("--list")
    assert result.returncode == 0
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert "tlb" in lines
    assert lines["tlb"].split()[1] == "tlb"


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_documents_every_option(run, flag):
    result = run("tlb", flag)
    assert result.returncode == 0
    assert result.stderr == ""
    for option in ["--pages", "--min-pages", "--max-pages", "--per-octave", "--page-size",
                   "4k", "thp", "hugetlb", "nr_hugepages", "--samples", "--min-sample-ms",
                   "--cpu", "--seed", "--ordered", "--experiment", "--output", "--human",
                   "--max-bytes", "--help", "paired_difference_median_ns"]:
        assert option in result.stdout, option
    assert "Example" in result.stdout


@pytest.mark.parametrize("args", [
    [],
    ["--pages"],
    ["--pages", "0"],
    ["--pages", "1"],
    ["--pages", "16,1"],
    ["--pages", "abc"],
    ["--pages", "-16"],
    ["--pages", "16,,32"],
    ["--pages", "99999999999"],
    ["--pages", "16", "--page-size", "1g"],
    ["--pages", "16", "--page-size", "2m"],
    ["--pages", "16", "--page-size"],
    ["--min-pages", "8"],
    ["--max-pages", "64"],
    ["--min-pages", "64", "--max-pages", "8"],
    ["--min-pages", "1", "--max-pages", "8"],
    ["--min-pages", "8", "--max-pages", "64", "--per-octave", "0"],
    ["--pages", "16", "--min-pages", "8", "--max-pages", "64"],
    ["--pages", "16", "--per-octave", "2"],
    ["--pages", "16", "--bogus"],
    ["--pages", "16", "stray"],
    ["--pages", "16", "--samples", "0"],
    ["--pages", "16", "--min-sample-ms", "0"],
    ["--pages", "16", "--cpu", "100000"],
    ["--pages", "1024", "--max-bytes", "1m"],
    ["--pages", "64", "--page-size", "thp", "--max-bytes", "64m"],
])
def test_bad_arguments_exit_2_with_one_line_message(run, args):
    result = run("tlb", *args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    message = result.stderr.strip()
    assert message and "\n" not in message


def test_page_count_1_says_a_cycle_needs_two(run):
    result = run("tlb", "--pages", "1")
    assert result.returncode == 2
    assert "at least two" in result.stderr


def test_buffer_above_max_bytes_is_refused(run):
    result = run("tlb", "--pages", "64", "--page-size", "thp", "--max-bytes", "127m")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "--max-bytes" in result.stderr


def test_records_follow_the_output_contract(contract_run):
    records = contract_run["records"]
    assert len(records) == 4
    # Per page count: the tlb record, then its control, adjacent.
    assert [r["params"]["chain"] for r in records] == ["tlb", "control"] * 2
    by_pages = pairs(records)
    assert set(by_pages) == {16, 64}
    for pages, pair in by_pages.items():
        for chain, record in pair.items():
            assert set(record) == TOP_KEYS
            assert set(record["params"]) == PARAM_KEYS
            assert set(record["summary"]) == SUMMARY_KEYS
            expected_context = CONTEXT_KEYS | (PAIRED_KEYS if chain == "tlb" else set())
            assert set(record["context"]) == expected_context
            assert record["schema_version"] == 1
            assert (record["experiment"], record["kernel"]) == ("tlb", "tlb")
            assert (record["metric"], record["unit"]) == ("latency", "ns")
            params = record["params"]
            assert params["pages"] == params["lines_touched"] == pages
            assert params["page_bytes"] == 4096
            assert params["page_size"] == "4k"
            assert params["working_set_bytes"] == pages * (4096 if chain == "tlb" else 64)
            assert params["huge_bytes_granted"] == 0 and params["huge_granted"] is False
            assert params["cpu"] is None
            assert params["seed"] == 11
            assert params["accesses_per_sample"] % 16 == 0
            samples, summary = record["samples"], record["summary"]
            assert len(samples) == summary["count"] == 3
            assert summary["min"] == min(samples)
            assert summary["median"] == sorted(samples)[1]
            context = record["context"]
            assert context["canary_before_ns"] > 0 and context["canary_after_ns"] > 0
            assert context["core_clock_ghz"] > 0.2
            assert math.isclose(context["median_cycles"],
                                summary["median"] * context["core_clock_ghz"], rel_tol=1e-6)
        # The two records of a page count share the point's context; the precision achieved is each chain's
        # own, how the pair was sampled is shared.
        for key in CONTEXT_KEYS - {"median_cycles", "precision"}:
            assert pair["tlb"]["context"][key] == pair["control"]["context"][key], key
        for key in ("samples", "stop", "sampling_s", "attempt", "requeued"):
            assert pair["tlb"]["context"]["precision"][key] == pair["control"]["context"]["precision"][key], key
        differences = [t - c for t, c in zip(pair["tlb"]["samples"], pair["control"]["samples"])]
        context = pair["tlb"]["context"]
        assert math.isclose(context["paired_difference_median_ns"],
                            statistics.median(differences), rel_tol=1e-6, abs_tol=1e-6)
        assert math.isclose(context["paired_difference_min_ns"], min(differences),
                            rel_tol=1e-6, abs_tol=1e-6)
    assert sorted(p["tlb"]["context"]["order_index"] for p in by_pages.values()) == [0, 1]


def test_one_progress_line_per_page_count(contract_run):
    progress = [line for line in contract_run["result"].stderr.splitlines()
                if line.startswith("tlb: ") and " pages=" in line]
    assert len(progress) == 2
    assert progress[-1].startswith("tlb: 2/2 pages=")
    for line in progress:
        assert " tlb=" in line and " control=" in line and " diff=" in line


def test_page_counts_are_shuffled_by_seed(run):
    given = [2, 4, 8, 16, 32]
    orders = {}
    for seed in ["1", "2", "3"]:
        records = tlb_records(run, "--pages", "2,4,8,16,32", "--seed", seed, *QUICK)
        assert [r["context"]["order_index"] for r in records] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
        assert {r["params"]["seed"] for r in records} == {int(seed)}
        assert sorted(measured_pages(records)) == given
        orders[seed] = measured_pages(records)
    assert len({tuple(order) for order in orders.values()}) > 1
    repeat = tlb_records(run, "--pages", "2,4,8,16,32", "--seed", "1", *QUICK)
    assert measured_pages(repeat) == orders["1"]


def test_ordered_keeps_the_given_order(run):
    records = tlb_records(run, "--pages", "32,4,16,8", "--ordered", "--seed", "1", *QUICK)
    assert measured_pages(records) == [32, 4, 16, 8]


def test_sweep_is_geometric_in_whole_pages(run):
    records = tlb_records(run, "--min-pages", "16", "--max-pages", "64", "--per-octave", "2",
                          "--ordered", *QUICK)
    assert measured_pages(records) == [16, 23, 32, 45, 64]
    records = tlb_records(run, "--min-pages", "2", "--max-pages", "4", "--ordered", *QUICK)
    assert measured_pages(records) == [2, 3, 4]  # 2, 2.38, 2.83, 3.36, 4 rounded, deduplicated


def test_human_table_replaces_json(run):
    result = run("tlb", "--pages", "8", "--human", *QUICK)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["point", "median", "unit"]
    assert [line.split()[:3] for line in lines[1:]] == [["pages=8", "4k", "tlb"],
                                                        ["pages=8", "4k", "control"]]


def test_within_l1_dtlb_tlb_equals_control(sanity_4k):
    # Same L1 sets, all translations in the L1 DTLB: the chains time alike (1.00 on the dev
    # VM). An L2 TLB hit per load would read ~2.7x, a conflict miss to L2 ~3x.
    for pages in [16, 32]:
        assert 0.9 <= min_ratio(sanity_4k[pages]) <= 1.5, pages


def test_tlb_chain_is_never_faster_than_control(sanity_4k):
    for pages, pair in sanity_4k.items():
        # Small counts are equal up to noise; the larger ones are 1.8-5x on the dev VM.
        assert min_ratio(pair) >= (0.9 if pages <= 32 else 0.95), pages


def test_l1_dtlb_miss_shows(sanity_4k):
    # 128 pages exceed the L1 DTLB of current x86 cores (Zen 4 here: step at 65 pages).
    assert min_ratio(sanity_4k[128]) > 1.3


def test_beyond_l2_tlb_is_clearly_slower(sanity_4k):
    pair = sanity_4k[8192]  # > the 3072-entry L2 TLB: a page walk per load
    assert min_ratio(pair) > 2.0
    assert pair["tlb"]["summary"]["median"] > 1.3 * pair["control"]["summary"]["median"]
    assert pair["tlb"]["context"]["paired_difference_median_ns"] > 0


def test_tlb_is_not_elided(sanity_4k):
    for pair in sanity_4k.values():
        timed_ns = 0
        for record in pair.values():
            accesses = record["params"]["accesses_per_sample"]
            sample_ns = [ns_per_access * accesses for ns_per_access in record["samples"]]
            # A deleted chase reads ~0 ns per load; no real L1 hit is under 0.5 ns.
            assert min(record["samples"]) >= 0.5
            # Samples are calibrated to >= 0.5 ms: ns/load x loads must account for that (the
            # longest sample; a noisy calibration may leave clean samples shorter) ...
            assert max(sample_ns) >= 0.5 * 0.5e6
            timed_ns += sum(sample_ns)
        # ... and the samples of both chains cannot add up to more than the point's wall time.
        assert timed_ns <= pair["tlb"]["context"]["wall_s"] * 1e9 * 1.01


def translation_ns(pair):
    """What translation costs a load: the median of the paired differences (tlb - control sample), in ns."""
    return pair["tlb"]["context"]["paired_difference_median_ns"]


def four_k_translation_ns(run, huge_pages):
    """The translation cost of 4 KiB pages spanning as many bytes as `huge_pages` 2 MiB pages, or None where the
    walk cannot be told from its control here.

    That span (>= 32 MiB) is past every current core's last-level TLB in 4 KiB pages, so each load walks. Huge
    pages over the same bytes must cost far less translation: the test compares the two in ns on this machine,
    not as ratios to their controls, whose lines differ in number (16 to 32 lines hit the L1; 8192 or more can miss
    a shared L2: an Emerald Rapids guest's 16384-line control read 38 ns, so its walk of 45 ns more read only 2.2x).
    A guest whose hypervisor backs memory with 4 KiB pages splinters each 2 MiB translation (2.4x the control on
    Intel guests: an STLB hit on every load, ~2.5 ns; 1.0 on a Zen 4 guest). A walk under a tenth of its control
    is lost in the control's noise (a guest's shared cache), so it is not compared."""
    pages = huge_pages * HUGE // 4096
    result = run("tlb", "--pages", f"2,{pages}", "--page-size", "4k",
                 "--samples", "21", "--min-sample-ms", "0.5", "--seed", "5")
    assert result.returncode == 0, result.stderr
    pair = pairs(parse_lines(result.stdout))[pages]
    walk = translation_ns(pair)
    return walk if walk >= 0.1 * pair["control"]["summary"]["median"] else None


def assert_huge_pages_save(huge_pair, small_ns, pages):
    huge_ns = translation_ns(huge_pair)
    if small_ns is None:
        pytest.skip(f"4 KiB pages over {pages * 2} MiB cost under a tenth of their control here (huge pages "
                    f"{huge_ns:.3g} ns a load): no walk to compare")
    assert huge_ns <= 0.5 * small_ns, (huge_ns, small_ns)


def test_thp_grant_is_measured_and_huge_pages_hide_translation(run):
    result = run("tlb", "--pages", "16,64", "--page-size", "thp", "--samples", "21",
                 "--min-sample-ms", "0.5", "--seed", "7")
    assert result.returncode == 0, result.stderr
    by_pages = pairs(parse_lines(result.stdout))
    for pages, pair in by_pages.items():
        for chain, record in pair.items():
            params = record["params"]
            assert params["page_size"] == "thp" and params["page_bytes"] == HUGE
            assert params["working_set_bytes"] == pages * (HUGE if chain == "tlb" else 64)
            buffer_bytes = -(-params["working_set_bytes"] // HUGE) * HUGE
            assert 0 <= params["huge_bytes_granted"] <= buffer_bytes
            assert params["huge_granted"] == (params["huge_bytes_granted"] == buffer_bytes)
    pair = by_pages[16]
    if pair["tlb"]["params"]["huge_granted"] and pair["control"]["params"]["huge_granted"]:
        assert_huge_pages_save(pair, four_k_translation_ns(run, 16), 16)
    else:
        assert "warning" in result.stderr and "huge_granted false" in result.stderr


def test_hugetlb_short_pool_exits_1_before_measuring(run):
    free = free_2m_pages()
    pages = max(free + 1, 2)  # the tlb chain alone needs more than the pool has
    result = run("tlb", "--pages", f"2,{pages}", "--page-size", "hugetlb", *QUICK)
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message
    assert f"needs {pages + 1} free" in message
    assert f"only {free} are free" in message
    assert "nr_hugepages" in message


@pytest.fixture
def hugetlb_pool():
    """Raises the 2 MiB pool to cover a 32-page point and restores nr_hugepages exactly."""
    if not os.access(NR_HUGEPAGES, os.W_OK):
        pytest.skip(f"{NR_HUGEPAGES} is not writable (needs root)")
    if free_2m_pages() >= 33:
        yield  # the pool already covers it: touch nothing
        return
    with open(NR_HUGEPAGES) as f:
        original = int(f.read())
    try:
        with open(NR_HUGEPAGES, "w") as f:
            f.write(str(original + 40))
        if free_2m_pages() < 33:
            pytest.skip("the kernel could not reserve 33 free 2 MiB pages")
        yield
    finally:
        with open(NR_HUGEPAGES, "w") as f:
            f.write(str(original))
        with open(NR_HUGEPAGES) as f:
            assert int(f.read()) == original


def test_hugetlb_pages_are_granted(run, hugetlb_pool):
    result = run("tlb", "--pages", "8,32", "--page-size", "hugetlb", "--samples", "21",
                 "--min-sample-ms", "0.5", "--seed", "3")
    assert result.returncode == 0, result.stderr
    by_pages = pairs(parse_lines(result.stdout))
    for pages, pair in by_pages.items():
        tlb, control = pair["tlb"]["params"], pair["control"]["params"]
        assert tlb["page_size"] == control["page_size"] == "hugetlb"
        assert tlb["page_bytes"] == HUGE
        assert tlb["huge_granted"] is True and control["huge_granted"] is True
        assert tlb["huge_bytes_granted"] == pages * HUGE
        assert control["huge_bytes_granted"] == HUGE
    assert_huge_pages_save(by_pages[32], four_k_translation_ns(run, 32), 32)
