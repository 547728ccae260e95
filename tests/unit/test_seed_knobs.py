"""The seed reports' settings the inventory now reaches (issue 31), at the filters that turn inventory variables
into kernel argv: threads as teams (capped at the host's CPUs, said in the notes), the TLB sweep by page stride,
the per-kind planner leaving a team whole; and the prefetcher switch's choice of MSR per vendor (Intel 0x1A4,
AMD Zen 0xC0000108) with its state file, without touching an MSR."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins" / "filter"))

from core_kinds import core_kind_points  # noqa: E402
from sweep import tlb_plan  # noqa: E402
from teams import team_notes, team_options, team_threads  # noqa: E402

spec = importlib.util.spec_from_file_location("msr_prefetch", ROOT / "roles" / "kernels" / "files" / "msr_prefetch.py")
msr_prefetch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(msr_prefetch)


def test_one_thread_is_the_pinned_default_and_a_team_shares_the_memory_cap():
    assert team_options(1, 0, 268435456, 4 << 30) == ["--cpu", "0", "--sizes", "268435456"]
    assert team_options(4, 0, 268435456, 4 << 30) == ["--threads", "4", "--sizes", "268435456"]
    # four DRAM-sized buffers that would not fit: each gets a quarter of the cap, in whole lines
    assert team_options(4, 0, 268435456, 600 << 20) == ["--threads", "4", "--sizes", str((600 << 20) // 4 // 64 * 64)]


def test_the_raptor_lake_reports_four_threads_run_as_the_host_allows_and_say_so():
    assert team_threads(4, 24) == 4 and team_notes(4, 24, "kernels_saxpy_threads") == [
        "4 threads (kernels_saxpy_threads), one per CPU"]
    assert team_threads(4, 2) == 2
    assert team_notes(4, 2, "kernels_rw_mix_threads") == [
        "kernels_rw_mix_threads asked for 4 threads; this host has 2 CPUs, so 2 ran (one per CPU)"]
    assert team_threads(1, 2) == 1 and team_notes(1, 2, "x") == []


def test_a_tlb_sweep_by_page_stride_is_one_more_4k_process_per_stride():
    plan = tlb_plan(["tlb", "--cpu", "0"], ["4k", "thp"], {"4k": 589824, "thp": 256}, 8, 1,
                    [4096, 8192, 16384, 32768, 65536])
    argvs = [point["argv"] for point in plan["points"]]
    strides = [argv[argv.index("--page-stride") + 1] if "--page-stride" in argv else None for argv in argvs]
    assert strides == [None, "8192", "16384", "32768", "65536", None]  # 4k at one page, the strides, thp
    pages = argvs[0][argvs[0].index("--pages") + 1].split(",")
    assert pages[0] == "8" and pages[-1] == "589824"  # the OSTEP study's page count
    assert all(argv[argv.index("--page-size") + 1] == "4k" for argv in argvs[:5])
    unchanged = tlb_plan(["tlb"], ["4k"], {"4k": 64}, 8, 1)
    assert len(unchanged["points"]) == 1 and "--page-stride" not in unchanged["points"][0]["argv"]


def test_a_team_runs_once_on_a_host_with_two_core_kinds():
    topology = {"core_kinds": [{"kind": "P-core", "representative_cpu": 0, "cpus": "0-7"},
                               {"kind": "E-core", "representative_cpu": 8, "cpus": "8-15"}]}
    team = {"label": "strides 1", "argv": ["saxpy", "--threads", "4", "--strides", "1"]}
    pinned = {"label": "strides 1", "argv": ["saxpy", "--cpu", "0", "--strides", "1"]}
    assert core_kind_points([team], "saxpy", topology, ["saxpy"]) == [team]
    assert [point["argv"][2] for point in core_kind_points([pinned], "saxpy", topology, ["saxpy"])] == [0, 8]


@pytest.mark.parametrize(("vendor", "family", "msr", "bits"), [
    ("GenuineIntel", 6, 0x1A4, 0xF),
    ("AuthenticAMD", 0x17, 0xC0000108, 0x2F),  # Zen, Zen 2
    ("AuthenticAMD", 0x19, 0xC0000108, 0x2F),  # Zen 3, Zen 4 (the dev VMs' host)
    ("AuthenticAMD", 0x1A, 0xC0000108, 0x2F),  # Zen 5
])
def test_the_prefetcher_msr_is_the_vendors(vendor, family, msr, bits):
    assert msr_prefetch.prefetch_msr(vendor, family) == (msr, bits, None)


@pytest.mark.parametrize(("vendor", "family", "says"), [
    ("AuthenticAMD", 0x15, "documented from Zen (family 17h); this CPU is family 0x15"),
    ("ARM", None, "no documented prefetcher MSR for this CPU (ARM)"),
])
def test_a_core_without_a_documented_switch_says_why(vendor, family, says):
    msr, bits, why = msr_prefetch.prefetch_msr(vendor, family)
    assert msr is None and says in why


def test_the_state_file_names_its_msr_and_an_unknown_one_is_refused(tmp_path):
    state = tmp_path / "msr-prefetch-state.json"
    state.write_text(json.dumps({"msr": 0xC0000108, "values": {"0": 0x3C0, "1": 0x3C0}}))
    assert msr_prefetch.saved_values(str(state)) == (0xC0000108, {0: 0x3C0, 1: 0x3C0})
    state.write_text(json.dumps({"msr": 0x1A4, "values": {"0": 0}}))  # written before AMD: Intel's
    assert msr_prefetch.saved_values(str(state))[0] == 0x1A4
    state.write_text(json.dumps({"msr": 0x10, "values": {"0": 0}}))
    with pytest.raises(SystemExit) as refused:
        msr_prefetch.saved_values(str(state))
    assert "0xc0000108 on AMD" in str(refused.value) and "not a record of a prefetcher MSR" in str(refused.value)


def test_this_host_says_why_its_prefetchers_cannot_be_switched():
    """On the dev VMs (AMD Zen 4 guests) the MSR is documented but /dev/cpu/N/msr is absent or refuses: the check
    names the MSR it would use and the reason, and nothing is written."""
    status = msr_prefetch.check()
    vendor, family = msr_prefetch.cpu_identity()
    if status["possible"]:
        pytest.skip("this host lets the prefetchers be switched")
    assert status["reason"]
    if vendor == "AuthenticAMD" and family >= 0x17:
        assert status["msr"] == 0xC0000108 and status["bits"] == 0x2F
