"""The mlc role's planning filters: buffer sizes per cache level from sysfs facts, the MLC argv per
mode and profile, and the experiment record built from the MLC processes' results."""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path

import pytest
import yaml

ROLES = Path(__file__).resolve().parents[2] / "roles"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


mlc = _load(ROLES.parent / "plugins" / "filter" / "mlc.py")
experiments = _load(ROLES.parent / "plugins" / "filter" / "experiments.py")
PROFILES = yaml.safe_load((ROLES / "mlc" / "vars" / "main.yml").read_text())["__mlc_profiles"]

# The dev VM's sysfs (Zen 4 guest): L1d 32 KiB, L1i 32 KiB, L2 512 KiB, L3 32 MiB.
ZEN4_VM = [
    {"level": 1, "type": "Data", "size_bytes": 32768},
    {"level": 1, "type": "Instruction", "size_bytes": 32768},
    {"level": 2, "type": "Unified", "size_bytes": 524288},
    {"level": 3, "type": "Unified", "size_bytes": 33554432},
]


def plan(modes=None, caches=ZEN4_VM, profile="quick", **options):
    modes = PROFILES[profile]["modes"] if modes is None else modes
    return mlc.mlc_plan(modes, caches, PROFILES[profile]["duration_s"], profile=profile,
                        profile_modes=PROFILES[profile]["modes"], **options)


def test_level_buffers_are_half_l1d_then_geometric_midpoints():
    buffers, notes = mlc.level_buffers(ZEN4_VM)
    assert [(b["level"], b["buffer_bytes"], b["sysfs_size_bytes"]) for b in buffers] == [
        ("L1d", 16 * 1024, 32768),         # half of L1d
        ("L2", 128 * 1024, 524288),        # sqrt(32 KiB x 512 KiB)
        ("L3", 4096 * 1024, 33554432),     # sqrt(512 KiB x 32 MiB)
    ]
    assert notes == []
    assert "half of L1d" in buffers[0]["buffer_rule"] and "midpoint of L1d and L2" in buffers[1]["buffer_rule"]


def test_level_buffers_round_down_to_whole_kib_and_skip_odd_levels():
    caches = [{"level": 1, "type": "Data", "size_bytes": 49152},        # 48 KiB (Golden Cove)
              {"level": 2, "type": "Unified", "size_bytes": 1310720},   # 1.25 MiB
              {"level": 3, "type": "Unified", "size_bytes": 1048576}]   # smaller than L2: not a level above it
    buffers, notes = mlc.level_buffers(caches)
    assert [b["buffer_bytes"] for b in buffers] == [24 * 1024, 247 * 1024]  # sqrt(48 KiB x 1280 KiB) = 247.9 KiB
    assert all(b["buffer_bytes"] % 1024 == 0 for b in buffers)
    assert notes and "L3" in notes[0]


def test_no_cache_facts_still_measure_dram():
    result = plan(modes=["idle_latency"], caches=[])
    assert [i["params"]["level"] for i in result["invocations"]] == ["DRAM"]
    assert any("no cache sizes" in note for note in result["notes"])


def test_quick_plan_argv_and_raw_paths():
    result = plan(profile="quick")
    argv = {i["raw_path"]: i["args"] for i in result["invocations"]}
    assert argv == {
        "raw/mlc/idle_latency_L1d.txt": ["--idle_latency", "-b16", "-t1", "-c0"],
        "raw/mlc/idle_latency_L2.txt": ["--idle_latency", "-b128", "-t1", "-c0"],
        "raw/mlc/idle_latency_L3.txt": ["--idle_latency", "-b4096", "-t1", "-c0"],
        "raw/mlc/idle_latency_DRAM.txt": ["--idle_latency", "-t1", "-c0"],  # MLC's default DRAM buffer
        "raw/mlc/loaded_latency.txt": ["--loaded_latency", "-t1"],          # MLC's default delay ladder
        "raw/mlc/peak_injection_bandwidth.txt": ["--peak_injection_bandwidth", "-t1"],
        "raw/mlc/c2c_latency.txt": ["--c2c_latency"],                       # c2c takes no -t
    }
    left_out = " ".join(result["notes"])
    assert "max_bandwidth left out by the quick profile" in left_out
    assert "latency_matrix left out" in left_out and "bandwidth_matrix left out" in left_out


def test_profiles_grow_modes_and_duration():
    modes = {profile: [i["mode"] for i in plan(profile=profile)["invocations"]] for profile in PROFILES}
    assert "max_bandwidth" not in modes["standard"] and "max_bandwidth" in modes["full"]
    assert {"latency_matrix", "bandwidth_matrix"} <= set(modes["standard"])
    assert PROFILES["quick"]["duration_s"] < PROFILES["standard"]["duration_s"] < PROFILES["full"]["duration_s"]
    assert plan(profile="full")["notes"] == []


def test_options_reach_the_argv():
    result = plan(modes=["idle_latency"], cpu=3, dram_buffer_bytes=512 * 1024 * 1024)
    dram = result["invocations"][-1]
    assert dram["args"] == ["--idle_latency", "-b524288", "-t1", "-c3"]
    assert dram["params"]["buffer_bytes"] == 512 * 1024 * 1024
    assert "mlc_modes" in " ".join(result["notes"])  # the other modes were left out by the user's list


def test_bad_modes_and_durations_are_refused():
    with pytest.raises(ValueError, match="unknown MLC mode"):
        plan(modes=["stream"])
    with pytest.raises(ValueError, match="at least 1 second"):
        mlc.mlc_plan(["c2c_latency"], ZEN4_VM, 0)


def test_argv_runs_inside_timeout_with_extra_args_last():
    invocation = plan(modes=["loaded_latency"])["invocations"][0]
    assert mlc.mlc_argv(invocation, "/tmp/x/mlc", ["-X"], 600) == [
        "timeout", "--kill-after=30", "600", "/tmp/x/mlc", "--loaded_latency", "-t1", "-X"]
    assert mlc.mlc_argv(invocation, "/tmp/x/mlc") == ["/tmp/x/mlc", "--loaded_latency", "-t1"]


def _results(invocations, failing=None):
    results = []
    for invocation in invocations:
        if invocation["mode"] == failing:
            results.append({"item": invocation, "rc": 1, "stdout": "Intel(R) Memory Latency Checker - v3.11b\n",
                            "stderr": "mlc: killed\n"})
        elif invocation["mode"] == "c2c_latency" and failing == "c2c_latency_silent":
            results.append({"item": invocation, "rc": 124, "stdout": "", "stderr": ""})
        else:
            results.append({"item": invocation, "rc": 0, "stdout": "output\n", "stderr": ""})
    return results


def test_raw_entries_record_the_command_line_and_exit_status():
    invocations = plan()["invocations"]
    entries = mlc.mlc_raw_entries(_results(invocations, failing="loaded_latency"), "/s/mlc/Linux/mlc", ["-X"])
    assert [e["path"] for e in entries] == [i["raw_path"] for i in invocations]
    assert all(e["tool"] == "mlc" for e in entries)
    loaded = next(e for e in entries if e["params"]["mode"] == "loaded_latency")
    assert loaded["params"]["exit_status"] == 1
    assert shlex.split(loaded["params"]["command_line"]) == ["/s/mlc/Linux/mlc", "--loaded_latency", "-t1", "-X"]
    for entry in entries:  # the manifest schema wants flat scalars
        assert all(value is None or isinstance(value, (str, int, float, bool)) for value in entry["params"].values())


def test_failures_name_each_failed_process():
    invocations = plan()["invocations"]
    assert mlc.mlc_failures(_results(invocations)) is None
    error = mlc.mlc_failures(_results(invocations, failing="loaded_latency"), 1800)
    assert error == "loaded_latency (-t1): exit 1: mlc: killed"
    timed_out = mlc.mlc_failures(_results(invocations, failing="c2c_latency_silent"), 1800)
    assert "stopped after mlc_timeout_s=1800 s" in timed_out
    # a process that printed nothing is not named as a raw output
    entries = mlc.mlc_raw_entries(_results(invocations, failing="c2c_latency_silent"), "mlc")
    assert "raw/mlc/c2c_latency.txt" not in [e["path"] for e in entries]


MEMINFO = "MemTotal: 1 kB\nHugePages_Total:    1024\nHugePages_Free:     1000\nHugepagesize:       2048 kB\n"


def test_host_notes_say_whether_msr_worked_and_what_it_means():
    missing = mlc.mlc_host_notes(False, {"rc": 2, "msg": "Error executing command.", "stderr": ""}, MEMINFO, 1024)
    assert "did not work" in missing[0] and "random access" in missing[0] and "kmod" in missing[0]
    loaded = mlc.mlc_host_notes(False, {"rc": 0, "stderr": ""}, MEMINFO, 1024)
    assert "loaded the msr driver" in loaded[0]
    already = mlc.mlc_host_notes(True, {"skipped": True}, MEMINFO, 1024, "GenuineIntel")
    assert "already loaded" in already[0] and len(already) == 2
    assert "1024 x 2.00 MB reserved" in already[1] and "1000 free" in already[1]
    short = mlc.mlc_host_notes(True, None, MEMINFO, 4096, "AuthenticAMD")
    assert any("AuthenticAMD" in note for note in short)
    assert "only 1024" in short[-1] and "asked for 4096" in short[-1]


def test_mlc_is_tagged_mlc_and_bandwidth_and_runs_only_when_enabled_and_tagged():
    tasks = yaml.safe_load((ROLES / "fleet" / "tasks" / "select.yml").read_text())
    (task,) = [task for task in tasks if "'mlc'" in str(task["ansible.builtin.set_fact"])]
    assert sorted(task["tags"]) == ["bandwidth", "mlc"]
    select = experiments.select_experiments
    registry = {"mlc": {"enabled": True}}
    assert select(registry, ["tlb", "mlc"]) == ["mlc"]
    assert select(registry, ["tlb"]) == []
    assert select({"mlc": {"enabled": False}}, ["mlc"]) == []


def test_outcome_is_ok_failed_or_skipped():
    invocations = plan()["invocations"]
    assert mlc.mlc_outcome(_results(invocations)) == {"status": "ok", "error": None}
    failed = mlc.mlc_outcome(_results(invocations, failing="loaded_latency"))
    assert failed["status"] == "failed" and "loaded_latency" in failed["error"]
    assert mlc.mlc_outcome([]) == {"status": "skipped", "error": None}  # mlc_modes selected nothing
    silent = [{"item": invocation, "rc": 0, "stdout": "", "stderr": ""} for invocation in invocations]
    assert mlc.mlc_outcome(silent)["status"] == "failed"  # an 'ok' with no output would be refused on ingest
