"""Tests for the per-level and pattern latency kernels: zero_queue, pattern_stride, mlp, write_cost.

They run on the shared latency engine that test_chase.py covers in depth (chain self-check, seeds,
order, output contract); these tests check what each kernel adds and the sanity relations of
docs/methods.md on this machine.
"""

import math
import os
import platform
import subprocess

import pytest

from hostcaches import CACHES, host_caches
from kernelrun import QUICK, OtherLoad, parse_lines

# the line flush of each architecture (test_cross_arch.py runs the others under qemu)
FLUSH_VARIANTS = {"x86_64": "clflush_mfence_round_trip", "aarch64": "dc_civac_dsb_round_trip",
                  "ppc64le": "dcbf_sync_round_trip"}
LATENCY_PARAMS = {"working_set_bytes", "stride_bytes", "line_bytes", "lines_touched", "pattern",
                  "page_policy", "huge_bytes_granted", "walk", "chains", "cpu",
                  "accesses_per_sample", "seed"}


def sysfs_levels():
    """{name: bytes} of the data/unified caches of cpu0, read independently of the kernel."""
    caches = host_caches()
    if caches.source.startswith("fallback"):
        pytest.skip(f"zero_queue reads sysfs, and {caches.source}")
    return caches.levels


@pytest.mark.parametrize("kernel", ["zero_queue", "pattern_stride", "mlp", "write_cost"])
def test_listed_and_documented(run, kernel):
    listing = run("--list").stdout.split("\n")
    assert any(line.split()[:2] == [kernel, kernel] for line in listing if line)
    result = run(kernel, "--help")
    assert result.returncode == 0 and result.stderr == ""
    for option in ["--samples", "--seed", "--cpu", "--output", "--max-bytes", "Example"]:
        assert option in result.stdout


@pytest.mark.parametrize("args", [
    ["zero_queue", "--levels", "L9"],
    ["zero_queue", "--page-policy", "1g"],
    ["zero_queue", "--dram-size", "64"],
    ["zero_queue", "--dram-size", "1000000g"],
    ["zero_queue", "stray"],
    ["pattern_stride", "--strides", "100"],
    ["pattern_stride", "--strides", "64,,256"],
    ["pattern_stride", "--strides", "0"],
    ["pattern_stride", "--patterns", "zigzag"],
    ["pattern_stride", "--footprint", "1000"],
    ["mlp", "--chains", "0"],
    ["mlp", "--chains", "17"],
    ["mlp", "--repeats", "0"],
    ["mlp", "--size", "1k"],
    ["write_cost", "--levels", ""],
    ["write_cost", "--bogus"],
    ["write_cost", "--samples", "0"],
])
def test_bad_arguments_exit_2_with_one_line_message(run, args):
    result = run(*args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip() and "\n" not in result.stderr.strip()


@pytest.fixture(scope="module")
def zero_queue_run(records):
    """zero_queue's points by level, and how many CPUs other processes kept busy meanwhile."""
    with OtherLoad() as others:
        points = {r["params"]["level"]: r for r in records("zero_queue", "--samples", "5", "--min-sample-ms", "5",
                                                           "--cpu", "0", "--seed", "3")}
    return points, others.cpus


@pytest.fixture(scope="module")
def zero_queue(zero_queue_run):
    return zero_queue_run[0]


def test_zero_queue_levels_come_from_sysfs(zero_queue):
    levels = sysfs_levels()
    assert set(zero_queue) == set(levels) | {"DRAM"}
    names = sorted(levels, key=levels.get)
    for lower, name in zip([None] + names, names):
        params = zero_queue[name]["params"]
        assert params["sysfs_size_bytes"] == levels[name]
        assert set(params) == LATENCY_PARAMS | {"level", "sysfs_size_bytes", "size_rule"}
        working_set = params["working_set_bytes"]
        assert working_set < levels[name]
        if lower:
            assert working_set > levels[lower]
            assert math.isclose(working_set, math.sqrt(levels[lower] * levels[name]), rel_tol=0.01)
        else:
            assert working_set == levels[name] // 2
    dram = zero_queue["DRAM"]["params"]
    assert dram["sysfs_size_bytes"] is None
    assert dram["working_set_bytes"] == max(8 * max(levels.values()), 256 << 20)


def test_zero_queue_latency_rises_level_by_level(zero_queue_run):
    zero_queue, others_cpus = zero_queue_run
    for record in zero_queue.values():
        context = record["context"]
        assert math.isclose(context["median_cycles"], record["summary"]["median"] * context["core_clock_ghz"],
                            rel_tol=1e-6)
    # Minima: other work on the machine only ever adds time (at a load average of 9 the L1d median read
    # more than 8 cycles); a machine kept that busy is reported rather than failed.
    minima = {name: record["summary"]["min"] for name, record in zero_queue.items()}
    l1_cycles = minima["L1d"] * zero_queue["L1d"]["context"]["core_clock_ghz"]
    sane = minima["L1d"] < minima["L2"] < minima["DRAM"] and 2 <= l1_cycles <= 8
    if not sane and others_cpus > 0.2:
        pytest.skip(f"other processes kept {others_cpus:.2f} CPUs busy: {minima}, "
                    f"L1d {l1_cycles:.1f} cycles")
    assert minima["L1d"] < minima["L2"] < minima["DRAM"], minima
    assert minima["DRAM"] >= 25  # docs/methods.md plausibility: a dependent DRAM chase
    # An L1 hit is a handful of cycles on any core; 2..8 catches a wrong clock or elided loads.
    assert 2 <= l1_cycles <= 8, l1_cycles


def test_zero_queue_reads_another_sysfs_tree(build, tmp_path):
    for index, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"),
                                                 (2, "Unified", "2048K"), (3, "Unified", "36M")]):
        folder = tmp_path / "cpu0" / "cache" / f"index{index}"
        folder.mkdir(parents=True)
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    result = subprocess.run([str(build["binary"]), "zero_queue", "--levels", "L1d,L2,L3,DRAM",
                             "--dram-size", "1m", *QUICK],
                            capture_output=True, text=True, env={**os.environ, "FLEETSCOPE_SYSFS_ROOT": str(tmp_path)},
                            timeout=120)
    assert result.returncode == 0, result.stderr
    by_level = {r["params"]["level"]: r["params"] for r in parse_lines(result.stdout)}
    assert by_level["L1d"]["working_set_bytes"] == 24 << 10
    assert by_level["L2"]["sysfs_size_bytes"] == 2 << 20
    assert by_level["L3"]["sysfs_size_bytes"] == 36 << 20
    assert by_level["DRAM"]["working_set_bytes"] == 1 << 20
    assert by_level["DRAM"]["size_rule"] == "given by --dram-size"


def test_pattern_stride_sequential_beats_random_and_keeps_footprint(records):
    footprint = CACHES.beyond_llc(factor=2, floor=128 << 20)  # past the last level even at stride 64
    result = records("pattern_stride", "--footprint", str(footprint), "--strides", "64,256",
                     "--patterns", "sequential,random", "--samples", "3", "--min-sample-ms", "5", "--cpu", "0")
    by_key = {(r["params"]["pattern"], r["params"]["stride_bytes"]): r for r in result}
    assert set(by_key) == {("sequential", 64), ("sequential", 256), ("random_cycle", 64), ("random_cycle", 256)}
    for (pattern, stride), record in by_key.items():
        params = record["params"]
        assert params["footprint_bytes"] == footprint and params["footprint_capped"] is False
        assert params["working_set_bytes"] == footprint * stride // 64
        assert params["lines_touched"] == footprint // 64
    # Prefetchers follow ascending addresses: a sequential 64 B walk is far faster than random.
    assert by_key[("sequential", 64)]["summary"]["median"] * 3 < by_key[("random_cycle", 64)]["summary"]["median"]


def test_pattern_stride_caps_the_span_and_says_so(records):
    (record,) = records("pattern_stride", "--footprint", "1m", "--strides", "4096", "--patterns", "random",
                        "--max-bytes", "16m", *QUICK)
    params = record["params"]
    assert params["footprint_capped"] is True
    assert params["working_set_bytes"] == 16 << 20
    assert params["footprint_bytes"] == (16 << 20) // 4096 * 64


@pytest.fixture(scope="module")
def mlp_points(records):
    return records("mlp", "--size", str(CACHES.beyond_llc()), "--chains", "1,2,4,8", "--repeats", "2", "--samples", "5",
                   "--min-sample-ms", "5", "--cpu", "0", "--seed", "5")


def test_mlp_points_cover_every_k_and_repeat(mlp_points):
    assert sorted((r["params"]["chains"], r["params"]["repeat"]) for r in mlp_points) == [
        (k, repeat) for k in (1, 2, 4, 8) for repeat in (0, 1)]
    for record in mlp_points:
        assert record["params"]["accesses_per_sample"] % (16 * record["params"]["chains"]) == 0


def test_mlp_one_chain_matches_the_plain_chase(records):
    # One chain of mlp is the plain chase: the same loads, the same accounting. Compared inside the
    # core's own L2 (the geometric midpoint of this host's L1d and L2: 181 KiB on a Zen 4, a factor 5.7
    # from either edge): at exactly the L2's size (1 MiB on Zen 4) a random chase is bimodal, 10.6 or
    # 13.6 ns from one run to the next; at DRAM size the two differ by what the memory system did just
    # before (on the Intel CI guest an mlp k=1 point measured after k=8 read 138 ns against the chase's
    # 169 ns three times running: the uncore clock follows recent traffic), which is the hardware.
    # Minima of many 1 ms samples, the two kernels alternating up to eight times: interference from other
    # work on the machine only ever adds time, and a short sample usually runs untouched (5 ms samples
    # read 3.9-9.5 ns here at a load average of 4, 1 ms ones 3.80). A guest's clock moves under it too: on
    # the Emerald Rapids CI guest one kernel's minimum at 313 KiB read 5.7-9.1 ns from one run to the next
    # (1.67-2.74 ns at 24 KiB, in L1), both kernels alike, and three rounds once left the chase's best at
    # 6.00 ns against mlp's 5.39; the best of ten rounds read 5.71 and 5.75.
    size = str(CACHES.inside("L2"))
    t1 = chase = math.inf
    with OtherLoad() as others:
        for seed in map(str, range(5, 13)):
            t1 = min([t1] + [r["summary"]["min"] for r in records(
                "mlp", "--size", size, "--chains", "1", "--repeats", "2", "--samples", "21", "--min-sample-ms", "1",
                "--cpu", "0", "--seed", seed)])
            (point,) = records("chase", "--sizes", size, "--samples", "21", "--min-sample-ms", "1", "--cpu", "0",
                               "--seed", seed)
            chase = min(chase, point["summary"]["min"])
            if t1 == pytest.approx(chase, rel=0.10):
                break
    if t1 != pytest.approx(chase, rel=0.10) and others.cpus > 0.2:
        pytest.skip(f"other processes kept {others.cpus:.2f} CPUs busy: mlp k=1 {t1:.3g} ns, chase {chase:.3g} ns")
    assert t1 == pytest.approx(chase, rel=0.10), CACHES.describe()


def test_mlp_overlaps_misses(mlp_points):
    t = {k: min(r["summary"]["median"] for r in mlp_points if r["params"]["chains"] == k) for k in (1, 2, 4, 8)}
    assert t[1] > t[2] > t[4] > t[8]
    assert t[1] / t[8] > 3  # any out-of-order core keeps several misses in flight


def test_write_cost_pairs_and_labels_the_flush(records):
    # Twice this host's last level (at least 256 MiB) rather than the default 8 x (3.75 GiB on the CI
    # guest, a minute to build): a DRAM-rule read-modify-write of >= 25 ns holds for an L3 hit too.
    result = records("write_cost", "--levels", "L1d,DRAM", "--dram-size", str(CACHES.beyond_llc()), "--samples", "3",
                     "--min-sample-ms", "5", "--cpu", "0")
    walks = {(r["params"].get("level"), r["params"].get("walk")): r for r in result if r["metric"] == "latency"}
    assert set(walks) == {("L1d", "read"), ("L1d", "read_modify_write"), ("DRAM", "read"),
                          ("DRAM", "read_modify_write")}
    (flush,) = [r for r in result if r["metric"] == "flush_round_trip"]
    assert flush["params"]["variant"] == FLUSH_VARIANTS[platform.machine()]
    assert "not store latency" in flush["params"]["note"]
    # A flush round trip goes to memory and back: far above an L1 hit.
    assert flush["summary"]["median"] > 5 * walks[("L1d", "read")]["summary"]["median"]
    assert walks[("DRAM", "read_modify_write")]["summary"]["median"] >= 25


def test_write_cost_can_leave_out_the_flush(records):
    result = records("write_cost", "--levels", "L1d", "--no-flush", *QUICK)
    assert sorted(r["params"]["walk"] for r in result) == ["read", "read_modify_write"]
    assert all(r["metric"] == "latency" for r in result)
