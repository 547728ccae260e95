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


# ---- The seed settings in the per-host plan (plugins/filter/plan.py): the processes the kernels role runs ----

SEED = {"kernels_pattern_stride_threads": 4, "kernels_pattern_stride_footprints": [1048576, 268435456],
        "kernels_stride_bandwidth_threads": 4, "kernels_rw_mix_threads": 64, "kernels_saxpy_threads": 4,
        "kernels_tlb_page_strides": [4096, 8192, 65536], "kernels_tlb_max_pages": {"4k": 589824},
        "kernels_aio_pattern": "sequential"}


def _hybrid_facts():
    from fleetscope import planning
    facts = planning.facts_from_sysfs(ROOT / "tests" / "fixtures" / "sysfs" / "intel-raptorlake-hybrid")
    facts["memory"]["mem_available_bytes"] = 64 << 30
    return facts


def _entries(profile, overrides):
    from fleetscope import planning
    plan = planning.plan(_hybrid_facts(), profile, overrides)
    return plan, {entry["name"]: entry for entry in plan["experiments"]}


def _option(argv, option):
    return argv[argv.index(option) + 1] if option in argv else None


def test_the_plan_runs_each_seed_setting_and_still_fits_the_budget():
    plan, entries = _entries("full", SEED)
    cpus = _hybrid_facts()["cpu"]["logical_cpus"]  # 20 on the Raptor Lake part
    # pattern_stride: the working-set grid (one process per pattern, stride and footprint), 4 threads a point
    runs = [process["argv"] for process in entries["pattern_stride"]["run"]]
    assert len(runs) == 3 * 4 * 2 and {_option(argv, "--footprint") for argv in runs} == {"1048576", "268435456"}
    assert all(_option(argv, "--threads") == "4" and argv.count("--footprint") == 1 for argv in runs)
    assert "working-set grid: 1048576, 268435456 B of lines touched" in entries["pattern_stride"]["notes"]
    # a footprint whose span at a stride passes each thread's share of the span cap touches less, and says so
    assert ("span capped at 4 GiB per thread (16 GiB over 4 threads): 256 MiB at stride 4096 touches 64 MiB of lines"
            in entries["pattern_stride"]["notes"])
    # tlb: one more 4k process per page stride other than 4096, up to the asked page count
    runs = [process["argv"] for process in entries["tlb"]["run"]]
    assert sorted(filter(None, (_option(argv, "--page-stride") for argv in runs))) == ["65536", "8192"]
    assert all(_option(argv, "--pages").endswith(",589824") for argv in runs if _option(argv, "--page-size") == "4k")
    # stride_bandwidth, rw_mix: a team with no --cpu; rw_mix's 64 threads capped at the host's CPUs, and said
    stride = entries["stride_bandwidth"]["run"][0]["argv"]
    assert _option(stride, "--threads") == "4" and "--cpu" not in stride
    mix = entries["rw_mix"]["run"][0]["argv"]
    assert _option(mix, "--threads") == str(cpus) and "--cpu" not in mix
    assert f"kernels_rw_mix_threads asked for 64 threads; this host has {cpus} CPUs, so {cpus} ran (one per CPU)" \
        in entries["rw_mix"]["notes"]
    # each thread's buffer within the memory cap (a quarter of MemAvailable) with the others'
    assert int(_option(mix, "--threads")) * int(_option(mix, "--sizes")) <= (64 << 30) // 4
    # saxpy: the team spans the core kinds, so it runs once, not once per kind
    saxpy = entries["saxpy"]
    assert all(_option(p["argv"], "--threads") == "4" and "--cpu" not in p["argv"] for p in saxpy["run"])
    assert saxpy["kinds"] == 2 and saxpy["points"] == len(saxpy["run"]) == 8
    assert "4 threads (kernels_saxpy_threads), one per CPU" in saxpy["notes"]
    assert all(_option(p["argv"], "--pattern") == "sequential" for p in entries["aio"]["run"])
    for profile, budget in (("quick", 120), ("standard", 900)):
        fitted, entries = _entries(profile, SEED)
        over = sorted(name for name, entry in entries.items()
                      if entry.get("allowance_s") and entry["bound_s"] > entry["allowance_s"] + 1e-9)
        # what the plan prices on top of the budget (the workloads, MLC: plan.py OUTSIDE_BUDGET) does not count
        within = sum(entry["bound_s"] for name, entry in entries.items() if name not in ("workloads", "mlc"))
        if profile == "standard":
            assert fitted["within_budget"] and within <= budget
        elif not fitted["within_budget"]:
            # quick's 2 minutes cannot hold every seed setting at once (a 20-thread rw_mix team, 589,824 TLB pages,
            # and the compute family's 7 s): the plan says so, naming each experiment still over its allowance
            assert fitted["bound_s"] > budget and "rw_mix" in over
            assert all(any("even with every cut the budget may make" in cut for cut in entries[name]["cuts"])
                       for name in over), over
        # the budget cut the asked page count and says so; the setting itself is still named
        assert any(cut.startswith("4k: up to") and "instead of 589824" in cut for cut in entries["tlb"]["cuts"])
        assert not any("measured on the" in cut for cut in entries["saxpy"]["cuts"])  # a team is not one kind


def test_the_seed_settings_left_at_their_defaults_change_no_process():
    _, plain = _entries("standard", {})
    _, ones = _entries("standard", {"kernels_pattern_stride_threads": 1, "kernels_saxpy_threads": 1,
                                    "kernels_stride_bandwidth_threads": 1, "kernels_rw_mix_threads": 1,
                                    "kernels_tlb_page_strides": [4096], "kernels_pattern_stride_footprints": []})
    for name in ("pattern_stride", "tlb", "stride_bandwidth", "rw_mix", "saxpy"):
        assert plain[name]["run"] == ones[name]["run"] and plain[name]["bound_s"] == ones[name]["bound_s"], name
        assert all("--threads" not in process["argv"] for process in plain[name]["run"])
    assert all(_option(p["argv"], "--pattern") == "random" for p in plain["aio"]["run"])


def test_companion_chains_add_to_the_price():
    """The price stays an upper bound: the companions build their chains at every point before the timed thread,
    so pattern_stride with companions costs more than without, and a team's saxpy no less than one thread's."""
    _, plain = _entries("full", {})
    _, team = _entries("full", {"kernels_pattern_stride_threads": 2, "kernels_saxpy_threads": 2})
    assert team["pattern_stride"]["bound_s"] > plain["pattern_stride"]["bound_s"]
    # one thread's pass a point, once instead of once per core kind (the hybrid part has two)
    assert team["saxpy"]["bound_s"] == pytest.approx((plain["saxpy"]["bound_s"] - 0.4) / 2 + 0.4, abs=0.01)
