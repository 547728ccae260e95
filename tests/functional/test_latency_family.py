"""The memory-latency family through site.yml on this machine: every experiment lands in its warehouse
view with the sanity relations of docs/methods.md, appears on the host page, and `--tags` selects it."""

from __future__ import annotations

import duckdb
import pytest

from helpers import Outputs, knob_values, run_playbook, scratch_leftovers

pytestmark = pytest.mark.functional

SECTIONS_EXPERIMENTS = ["latency_sweep", "zero_queue", "pattern_stride", "tlb", "mlp", "write_cost", "c2c"]
SECTIONS = ["latency", "zero-queue", "pattern-stride", "tlb", "mlp", "write-cost", "c2c"]


@pytest.fixture(scope="module")
def family(site_run):
    """The whole family comes from the shared quick run of site.yml (every experiment is on by default)."""
    outputs, proc, before = site_run
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert knob_values() == before
    assert not scratch_leftovers()
    return outputs


def rows(outputs: Outputs, sql: str) -> list[tuple]:
    with duckdb.connect(str(outputs.warehouse), read_only=True) as db:
        return db.execute(sql).fetchall()


def test_every_experiment_ran_and_left_nothing_out(family):
    experiments = dict(rows(family, "select experiment, status from experiments where experiment in "
                                    "('latency_sweep', 'zero_queue', 'pattern_stride', 'tlb', 'mlp', 'write_cost', 'c2c')"))
    assert experiments == {name: "ok" for name in SECTIONS_EXPERIMENTS}
    # the tuning role reserved 2 MiB pages, so hugetlb was measured, not left out (the notes may say what
    # the budget cut)
    (notes,) = rows(family, "select notes from experiments where experiment = 'tlb'")[0]
    assert "left out" not in (notes or "")
    assert rows(family, "select count(*) from tlb_reach where page_size = 'hugetlb'")[0][0] > 0


def test_every_kernel_process_was_counted_by_perf_as_far_as_this_host_can(family):
    (capability,) = rows(family, "select facts->>'$.perf.capability' from facts")[0]
    counted = {experiment for (experiment,) in rows(family, "select distinct experiment from perf_counters")}
    if capability == "none":
        assert rows(family, "select count(*) from perf_counters") == [(0,)]
        return
    assert set(SECTIONS_EXPERIMENTS) <= counted  # the CPU/OS/IO kernels are counted too
    states = dict(rows(family, "select name, list_distinct(list(state)) from perf_counters group by name"))
    assert states["task-clock"] == ["counted"]
    expected_hw = ["counted"] if capability == "hardware" else ["not supported"]
    assert states["cycles"] == expected_hw
    assert rows(family, "select count(*) from perf_counters where state <> 'counted' and value is not null") == [(0,)]


def test_latency_sweep_has_both_page_policies(family):
    sizes = dict(rows(family, "select page_policy, list(distinct working_set_bytes) from latency_curve group by all"))
    assert set(sizes) == {"thp", "4k"}
    # both policies measure the coarse pass's sizes; the adaptive sweep adds sizes to the THP curve alone
    assert set(sizes["4k"]) <= set(sizes["thp"])


def test_zero_queue_levels_rise(family):
    # Minima: other work on a shared machine only ever adds time, so the order of the levels holds in them
    # however busy the machine was (medians can cross where the L2 point caught a burst of load).
    levels = dict(rows(family, "select level, min_ns from zero_queue_levels"))
    assert levels["L1d"] < levels["L2"] < levels["DRAM"]
    assert levels["DRAM"] >= 25


def test_tlb_chain_is_not_faster_than_its_control(family):
    # Minima, as for the zero_queue levels: where both chains hit the L1 a burst of load can put one median 12%
    # above the other (an Emerald Rapids guest: 8 pages 2.32 vs 2.61 ns, minima 2.07 vs 2.03). A neighbour on a
    # shared core can lift even the control's minimum (CI's guest: 64 pages 1.77 vs 1.98 ns): the tool must then
    # say so, its tlb_below_control check naming the lowest pair and how many broke the rule.
    reach = rows(family, "select page_size, pages, tlb_median_ns, control_median_ns, huge_granted, tlb_min_ns, "
                         "control_min_ns from tlb_reach")
    assert {page_size for page_size, *_ in reach} == {"4k", "thp", "hugetlb"}
    below = [(page_size, pages) for page_size, pages, _tlb, _control, _, tlb_min, control_min in reach
             if tlb_min < 0.9 * control_min]
    (status, item, value, evidence), = rows(family, "select status, item, value, evidence from flags "
                                                    "where rule = 'tlb_below_control'")
    lowest = min(reach, key=lambda row: row[5] / row[6])
    assert item.startswith(f"{lowest[0]} {lowest[1]} pages: ") and value == pytest.approx(lowest[5] / lowest[6])
    assert status == ("flagged" if below else "clear"), (below, evidence)
    assert evidence.startswith(f"{len(below)} of {len(reach)} checked break it"), evidence
    biggest_4k = max((r for r in reach if r[0] == "4k"), key=lambda r: r[1])
    assert biggest_4k[2] > 1.3 * biggest_4k[3], "beyond the L2 TLB, 4 KiB pages must cost a walk"
    assert all(granted for page_size, _pages, _tlb, _control, granted, *_ in reach if page_size == "hugetlb")


def test_mlp_one_chain_is_the_plain_chase(family):
    curve = dict(rows(family, "select chains, mlp from mlp_curve"))
    assert set(curve) == set(range(1, 17))
    assert curve[1] == pytest.approx(1.0)
    assert curve[8] > 3
    # One chain times DRAM as zero_queue does: the same order (tests/kernels checks that the two are equal
    # in the caches). Not within 10%: where the uncore clock follows recent traffic, mlp's k=1 points right
    # after its k=16 ones read faster (340 vs 427 ns minima on the Intel CI guest); far above any cache.
    t1 = rows(family, "select min_ns_per_access from mlp_curve where chains = 1")[0][0]
    dram = rows(family, "select min_ns from zero_queue_levels where level = 'DRAM'")[0][0]
    assert 0.6 * dram <= t1 <= 1.4 * dram, (t1, dram)


def test_pattern_stride_and_write_cost_land(family):
    patterns = rows(family, "select pattern, stride_bytes, median_ns from pattern_stride_latency")
    assert len(patterns) == 12
    by_key = {(p, s): ns for p, s, ns in patterns}
    assert by_key[("sequential", 64)] < by_key[("random_cycle", 64)]
    levels = rows(family, "select level, read_ns, rmw_ns from write_cost_levels")
    assert {level for level, *_ in levels} >= {"L1d", "L2", "DRAM"}
    assert all(read and rmw for _, read, rmw in levels)
    (flush,) = rows(family, "select variant, median_ns from write_cost_flush")
    assert flush[0] == "clflush_mfence_round_trip" and flush[1] > 20


def test_c2c_pairs_are_symmetric_or_flagged(family):
    """Minima, as above: a busy sibling guest slows one direction's samples, not its fastest round trip. A pair
    still far apart one way from the other (a Zen 4 guest read 158 ns from CPU 0 to 1 and 41 ns back: the
    hypervisor had moved a vCPU between the two directions) is what c2c_asymmetric reports, with the pair."""
    matrix = {(a, b): ns for a, b, ns in rows(family, "select cpu_a, cpu_b, min_ns from c2c_matrix")}
    assert matrix and all(a != b for a, b in matrix) and all((b, a) in matrix for a, b in matrix)
    worst = max(max(ns, matrix[(b, a)]) / min(ns, matrix[(b, a)]) for (a, b), ns in matrix.items())
    ((status, value, threshold),) = rows(family, "select status, value, threshold from flags "
                                                 "where rule = 'c2c_asymmetric'")
    assert value == pytest.approx(worst) and (status == "flagged") == (worst > threshold), (matrix, status)


def test_c2c_compares_llc_domains_or_says_why_it_cannot(family):
    """The c2c plan reads this host's LLC domains from its facts: with one, the notes say there is nothing to
    compare and c2c_llc_domains is empty; with more, every ordered pair of domains has a row."""
    (domains,) = rows(family, "select json_array_length(facts -> '$.topology.llc_domains') from facts")[0]
    (notes,) = rows(family, "select notes from experiments where experiment = 'c2c'")[0]
    summary = rows(family, "select llc_domain_a, llc_domain_b, pairs from c2c_llc_domains")
    if domains == 1:
        assert "one LLC domain" in notes and "no within- vs across-domain latency" in notes
        assert summary == []
    else:
        assert f"{domains} LLC domains" in notes
        assert len(summary) == domains * domains and all(pairs >= 1 for *_, pairs in summary)


def test_host_page_has_a_chart_and_table_per_experiment(family):
    page = (family.reports / "localhost.html").read_text()
    for section in SECTIONS:
        assert f'id="{section}-chart"' in page, section
    for section in SECTIONS[1:]:
        assert f'id="{section}-table"' in page, section
    assert 'id="write-cost-extra-table"' in page and "not store latency" in page


def test_tags_select_experiments(outputs):
    proc = run_playbook("site.yml", outputs, "--tags", "zero_queue,c2c")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert {e["name"] for e in outputs.manifest()["experiments"]} == {"zero_queue", "c2c"}
