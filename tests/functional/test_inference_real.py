"""Inference on this machine's real sweep (the shared quick run of site.yml, adaptive: each step bracketed to
1/4 octave): the L1 data cache within 12.5% of sysfs, the L1 DTLB within 15% of the part's documented entry
count, every level beside its sysfs size on the host page, and no plausibility flag on a clean run that the
machine's state (a busy neighbour, fragmented memory) cannot explain."""

from __future__ import annotations

import math

import duckdb
import pytest

from fleetscope.analyze.plausibility import RULES
from fleetscope.units import format_bytes

pytestmark = pytest.mark.functional

# L1 DTLB entries (4 KiB pages) documented per microarchitecture: (vendor, family, model range) -> entries.
DOCUMENTED_L1_DTLB = {
    ("AuthenticAMD", 25, range(0x10, 0x20)): 72,   # Zen 4 (Genoa)
    ("AuthenticAMD", 25, range(0x60, 0x80)): 72,   # Zen 4 (Raphael, Phoenix)
    ("AuthenticAMD", 25, range(0xA0, 0xB0)): 72,   # Zen 4 (Bergamo)
    ("AuthenticAMD", 25, range(0x00, 0x10)): 64,   # Zen 3 (Milan)
    ("AuthenticAMD", 25, range(0x20, 0x60)): 64,   # Zen 3 (Vermeer, Cezanne ...)
}


@pytest.fixture(scope="module")
def warehouse(site_run):
    outputs, proc, _ = site_run
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    with duckdb.connect(str(outputs.warehouse), read_only=True) as connection:
        yield connection, outputs


def _l1_off_stated(connection) -> str | None:
    """The evidence of the run's size_off_stated flag where it names the THP curve's L1 (the chase kept less of
    the L1 than sysfs states: the host's core shared with other work), else None."""
    row = connection.execute("SELECT evidence FROM flags WHERE rule = 'size_off_stated' AND status = 'flagged'"
                             ).fetchone()
    return row[0] if row and "thp L1 " in row[0] else None


def _private_cache_off_stated(connection) -> str | None:
    """The evidence of the run's size_off_stated flag where it names the THP curve's L1 or L2, the caches of one
    core (a Zen 4 guest's 1 MiB L2 reads 724-790 KiB: its core shared with other work), else None."""
    row = connection.execute("SELECT evidence FROM flags WHERE rule = 'size_off_stated' AND status = 'flagged'"
                             ).fetchone()
    return row[0] if row and ("thp L1 " in row[0] or "thp L2 " in row[0]) else None


def test_l1_size_is_bracketed_to_a_quarter_octave_within_an_eighth_of_sysfs(warehouse):
    connection, _ = warehouse
    sysfs = connection.execute("SELECT size_bytes FROM cache_levels WHERE level = 1 AND type = 'Data'").fetchone()[0]
    (low, high, capacity, method, sysfs_beside, version), = connection.execute(
        "SELECT l.size_low_bytes, l.size_high_bytes, l.capacity_bytes, l.size_method, l.sysfs_size_bytes, "
        "r.inference_version FROM inferred_levels l JOIN inference_runs r USING (run_id, host) "
        "WHERE l.page_policy = 'thp' AND l.level = 'L1'").fetchall()
    assert sysfs_beside == sysfs and version >= 6
    # the adaptive sweep narrowed the L1 step (an L1 indexed within a page: read at its onset)
    assert math.log2(high / low) <= 0.25 + 0.03, (low, high)
    assert (capacity, method) == ((sysfs, "sysfs") if low <= sysfs <= high
                                  else (round(math.sqrt(low * high)), "onset"))
    evidence = _l1_off_stated(connection)
    if evidence is None:
        # the claim is the bracket: it holds sysfs's size, or misses it by less than an eighth of an octave
        assert low / 2 ** 0.125 <= sysfs <= high * 2 ** 0.125, (low, high, sysfs)
    else:
        # A busy machine is not a red suite: on a host core shared with other work (the guest's SMT sibling running
        # another guest) the chase keeps only a share of the L1 (CI read 13.4-16 KiB of 32 KiB), which no guest can
        # see, and the tool must say so: the flag names the level, its bracket and the stated size.
        assert f"thp L1 {format_bytes(low)}-{format_bytes(high)} vs stated {format_bytes(sysfs)}" in evidence
        assert not low / 2 ** 0.25 <= sysfs <= high * 2 ** 0.25, (low, high, sysfs)


def test_l1_dtlb_step_is_within_one_step_of_the_documented_count(warehouse):
    connection, _ = warehouse
    vendor, family, model = connection.execute("SELECT cpu_vendor, cpu_family, cpu_model FROM host_facts").fetchone()
    documented = next((entries for (v, f, models), entries in DOCUMENTED_L1_DTLB.items()
                       if v == vendor and f == family and model in models), None)
    if documented is None:
        pytest.skip(f"no documented L1 DTLB size for {vendor} family {family} model {model} in this test's table")
    (entries, low, high, note), = connection.execute(
        "SELECT l1_entries, l1_low_pages, l1_high_pages, note FROM inferred_tlb WHERE page_size = '4k'").fetchall()
    assert low is not None, entries
    if _private_cache_off_stated(connection) is not None or "the points scatter around the fit" in (note or ""):
        # the run's own L1 or L2 reading says the core was shared (the test above): its DTLB is shared with the same
        # neighbour, so the step holds fewer entries than the part's, never more (CI: 45-53 of 72 beside an L1 read
        # at half; a Zen 4 guest: 45-53 beside its L2 read at 724-790 KiB of 1 MiB). The same where the curve's own
        # note says its points scatter (a Zen 4 guest's: misses from 53 pages, 0.56 ns of a 1.9 ns step at 64, and
        # "steps smaller than 45% cannot be told from that noise"): the step's foot, not the count, starts it
        assert low <= documented * 1.15, (entries, low, high, documented)
        return
    # The claim is the step's bracket (its log-midpoint is the count, where the bracket is fine enough for one):
    # it must hold the documented count to within 15%. The chase shares the DTLB with the process's own pages, so some
    # runs show a foot a few pages below the count (Zen 4: 0.2 ns at 64 pages of a 72-entry DTLB, bimodal) and
    # read the step as 32-64 or 53-64 pages (58 entries); others read 64-76 (70).
    assert low / 1.15 <= documented <= high * 1.15, (entries, low, high, documented)


def test_every_level_sits_beside_its_sysfs_size_on_the_host_page(warehouse):
    connection, outputs = warehouse
    levels = connection.execute("SELECT level, capacity_bytes, sysfs_size_bytes, plateau_last_bytes "
                                "FROM inferred_levels WHERE page_policy = 'thp' ORDER BY level_index").fetchall()
    assert levels[0][0] == "L1"
    if levels[-1][0] != "DRAM":
        # Memory is named only past twice the largest cache sysfs states: a budget that cut the sweep below that (an
        # Emerald Rapids guest's 300 MiB L3 against quick's 64 MiB) leaves its last plateau a cache the sweep ended
        # inside - sysfs's L3 with no capacity read (no edge past it), or a level sysfs does not have - never a DRAM
        # it did not reach
        largest = max(stated or 0 for _level, _capacity, stated, _last in levels)
        assert levels[-1][1] is None or levels[-1][2] is None, levels
        assert levels[-1][3] < 2 * largest, levels
    page = (outputs.reports / "localhost.html").read_text()
    assert 'id="inferred-levels"' in page and 'id="inferred-tlb"' in page and 'id="flags"' in page


# Rules a busy machine can trip on honest numbers: a neighbour's load lifts the lightest loaded-latency point
# or lowers the read a non-temporal write is compared with, a fragmented memory grants fewer huge pages, and the
# consistency and noise rules exist to notice a neighbour: two experiments measuring one working set at
# different times, samples spread or split in two, an L1 canary that moved, threads that got one CPU between
# them. The others compare a figure with what no interference can reach (a chase faster than DRAM, bandwidth
# above the DIMMs' peak, more I/Os in flight than were queued) or count bytes, so on this machine's clean run
# they must stay clear.
STATE_SENSITIVE = {"loaded_idle_far_above_idle", "nt_write_far_above_read", "huge_pages_not_granted",
                   "experiments_disagree", "noisy_point", "bimodal_point", "canary_drift", "threads_shared_one_cpu",
                   "plan_overshoot",  # a machine busier than the plan's rates stretches every experiment
                   "loaded_below_idle",  # a neighbour busy while the idle point ran lifts it above a loaded one
                   "size_off_stated",  # a guest's L3 share (or a core shared with another guest) is not sysfs's size
                   "load_never_ran",  # a load thread that got no CPU beside the suite's other worker
                   "tlb_below_control",  # a neighbour on the core while the control chain's turns ran
                   "c2c_asymmetric"}  # a vCPU the hypervisor moved between a c2c pair's two directions
# A flag is below its threshold for these rules (a share granted, CPUs used, load moved, a chain's minimum over its
# control's), above it for the others.
FLAGGED_BELOW = {"huge_pages_not_granted", "threads_shared_one_cpu", "load_never_ran", "tlb_below_control"}


def test_this_machines_clean_run_raises_no_flag_noise_cannot_explain(warehouse):
    """A busy neighbour is not a red suite: a state-sensitive flag that fires is the flag doing its job, and
    the test checks what it says instead - the worst item, its value past the threshold, and for the
    consistency and noise rules the numbers behind it (both experiments' CIs, the canary readings)."""
    connection, _ = warehouse
    flagged = connection.execute("SELECT rule, subject, item, value, threshold, comparison, evidence FROM flags "
                                 "WHERE status = 'flagged'").fetchall()
    assert [row for row in flagged if row[0] not in STATE_SENSITIVE] == []
    for rule, subject, item, value, threshold, comparison, evidence in flagged:
        assert item and item in evidence and comparison, (rule, evidence)
        if rule == "size_off_stated":   # either way: a level smaller or larger than stated
            assert not 1 / threshold <= value <= threshold, (rule, value, threshold)
        else:
            assert (value <= threshold) if rule in FLAGGED_BELOW else (value > threshold), (rule, value, threshold)
        if rule == "experiments_disagree":
            assert " vs " in item and evidence.count("[CI95 ") == 2, evidence
        elif rule == "canary_drift":
            assert "ns before" in evidence and "median canary" in evidence, evidence
    rules = {rule for (rule,) in connection.execute("SELECT DISTINCT rule FROM flags").fetchall()}
    assert rules == {rule.__name__ for rule in RULES}
    assert STATE_SENSITIVE <= rules
    # a rule that could not run (the DRAM peak in a VM without dmidecode access) says why
    reasons = connection.execute("SELECT reason FROM flags WHERE status = 'not_run'").fetchall()
    assert all(reason for (reason,) in reasons)
