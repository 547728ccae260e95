"""Tests for the saxpy kernel: y = a*x + y at strides 1..128 elements with constant work.

Checks the record contract of spec issue 4 (params, context), the line-visit accounting against an
independent count, the cache-miss effect on this machine (a stride of 8 elements or more, one line
per update, is slower per update than stride 1 at a DRAM-sized array) and the argument checks.
"""

import pytest

from hostcaches import CACHES
from kernelrun import parse_lines

SAXPY_PARAMS = {"stride_elements", "stride_bytes", "elements", "element_bytes", "array_bytes",
                "updates_per_pass", "passes_per_sample", "cpu", "accesses_per_sample", "seed"}
SAXPY_CONTEXT = {"line_visits_per_pass", "effective_gb_s", "canary_before_ns", "canary_after_ns",
                 "core_clock_ghz", "median_cycles", "wall_s", "order_index"}


def line_visits(elements, stride):
    """Distinct 64-B lines of x and y each offset sweep touches, summed over the sweeps."""
    visits = 0
    for offset in range(stride):
        visits += len({i // 8 for i in range(offset, elements, stride)})
    return 2 * visits


def test_listed_and_documented(run):
    listing = run("--list").stdout.splitlines()
    assert any(line.split()[:2] == ["saxpy", "saxpy"] for line in listing)
    result = run("saxpy", "--help")
    assert result.returncode == 0 and result.stderr == ""
    for text in ["--strides", "--size", "--elements", "--samples", "--seed", "--cpu", "perf stat",
                 "one process per stride", "Example"]:
        assert text in result.stdout


@pytest.mark.parametrize("args", [
    ["--strides", "0"],
    ["--strides", "1,,8"],
    ["--strides", "x"],
    ["--size", "100"],
    ["--size", "16"],
    ["--size", "1m", "--elements", "1000"],
    ["--elements", "1"],
    ["--elements", "1000", "--strides", "1001"],
    ["--size", "1000000g"],
    ["--page-policy", "1g"],
    ["--samples", "0"],
    ["--bogus"],
    ["stray"],
])
def test_bad_arguments_exit_2_with_one_line_message(run, args):
    result = run("saxpy", *args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip() and "\n" not in result.stderr.strip()


def test_records_carry_the_spec_params_and_accounting(records):
    strides = [1, 3, 8, 9, 64]
    elements = 10000
    out = records("saxpy", "--elements", str(elements), "--strides", ",".join(map(str, strides)),
                  "--samples", "3", "--min-sample-ms", "1", "--cpu", "0", "--seed", "5")
    assert sorted(r["params"]["stride_elements"] for r in out) == strides
    assert sorted(r["context"]["order_index"] for r in out) == list(range(len(strides)))
    for r in out:
        p, c = r["params"], r["context"]
        assert r["experiment"] == "saxpy" and r["kernel"] == "saxpy"
        assert r["metric"] == "saxpy" and r["unit"] == "ns"
        assert SAXPY_PARAMS <= set(p) and SAXPY_CONTEXT <= set(c)
        s = p["stride_elements"]
        assert p["stride_bytes"] == 8 * s
        assert p["elements"] == elements and p["element_bytes"] == 8
        assert p["array_bytes"] == 8 * elements
        assert p["updates_per_pass"] == elements
        assert p["passes_per_sample"] >= 1
        assert p["accesses_per_sample"] == p["passes_per_sample"] * elements
        assert p["cpu"] == 0 and p["seed"] == 5
        assert len(r["samples"]) == 3 and all(v > 0 for v in r["samples"])
        assert c["line_visits_per_pass"] == line_visits(elements, s)
        pass_ns = r["summary"]["median"] * elements
        assert c["effective_gb_s"] == pytest.approx(c["line_visits_per_pass"] * 64 / pass_ns, rel=1e-6)


def test_size_is_both_arrays_and_order_follows_the_seed(run):
    args = ["saxpy", "--size", "64k", "--strides", "1,2,4,8", "--samples", "1", "--min-sample-ms", "1"]
    first = parse_lines(run(*args, "--seed", "11").stdout)
    again = parse_lines(run(*args, "--seed", "11").stdout)
    assert [r["params"]["stride_elements"] for r in first] == \
        [r["params"]["stride_elements"] for r in again]
    assert all(r["params"]["elements"] == 4096 and r["params"]["array_bytes"] == 32768 for r in first)
    assert all(r["params"]["cpu"] is None for r in first)
    ordered = parse_lines(run(*args, "--ordered").stdout)
    assert [r["params"]["stride_elements"] for r in ordered] == [1, 2, 4, 8]


def test_one_line_per_update_is_slower_than_stride_1_at_dram_size(records):
    # Each array twice this host's last level (64 MiB each on a 32 MiB L3). Stride 8 fetches a whole
    # line per update (~7x the time on the dev VM); fastest samples, so a busy neighbour cannot flip it.
    out = records("saxpy", "--size", str(2 * CACHES.beyond_llc(factor=2, floor=64 << 20)), "--strides", "1,8,64",
                  "--samples", "3",
                  "--min-sample-ms", "5", "--cpu", "0", "--seed", "2")
    fastest = {r["params"]["stride_elements"]: r["summary"]["min"] for r in out}
    assert fastest[8] > 2 * fastest[1], fastest
    assert fastest[64] > 2 * fastest[1], fastest
