"""The kernels at the settings the seed lab reports used, which the inventory now reaches (issue 31): threads for
pattern_stride and saxpy, the TLB sweep by page stride and the OSTEP study's 589,824 pages, and aio's
sequential reads. Small sizes and few samples except where the seed's own setting is the point."""

from __future__ import annotations

import os

import pytest

from kernelrun import parse_lines

CPUS = len(os.sched_getaffinity(0))
FAST = ["--samples", "3", "--min-sample-ms", "2", "--seed", "9"]


def test_pattern_stride_with_companion_threads_records_them(run):
    if CPUS < 2:
        pytest.skip("one CPU: no CPU for a companion thread")
    result = run("pattern_stride", "--footprint", "4m", "--patterns", "random", "--strides", "64", "--threads", "2",
                 "--cpu", str(sorted(os.sched_getaffinity(0))[0]), *FAST)
    assert result.returncode == 0, result.stderr
    (record,) = parse_lines(result.stdout)
    params = record["params"]
    assert params["threads"] == 2 and len(params["load_cpus"]) == 1 and params["load_cpus"][0] != params["cpu"]
    assert params["footprint_bytes"] == 4 << 20


def test_pattern_stride_refuses_more_threads_than_cpus_in_one_line(run):
    result = run("pattern_stride", "--threads", str(CPUS + 1), "--cpu", "0", "--footprint", "1m")
    assert result.returncode == 2 and result.stdout == ""
    assert f"--threads {CPUS + 1} needs {CPUS} CPUs besides the measuring one" in result.stderr


def test_saxpy_with_threads_updates_every_element_once_per_pass(run):
    if CPUS < 2:
        pytest.skip("one CPU: no team")
    result = run("saxpy", "--size", "16m", "--strides", "1,16", "--threads", "2", *FAST)
    assert result.returncode == 0, result.stderr  # exit 3 if any element missed or got a second update
    records = parse_lines(result.stdout)
    assert [record["params"]["threads"] for record in records] == [2, 2]
    assert all(len(record["params"]["cpus"]) == 2 and record["params"]["cpu"] is None for record in records)
    alone = parse_lines(run("saxpy", "--size", "16m", "--strides", "1", "--cpu", "0", *FAST).stdout)
    assert alone[0]["params"]["threads"] == 1 and alone[0]["params"]["cpus"] is None


def test_saxpy_threads_refuse_a_pinned_cpu_and_too_many_threads(run):
    pinned = run("saxpy", "--size", "1m", "--threads", "2", "--cpu", "0")
    assert pinned.returncode == 2 and "--cpu pins one thread" in pinned.stderr
    many = run("saxpy", "--size", "1m", "--threads", str(CPUS + 1))
    assert many.returncode == 2 and "needs as many CPUs" in many.stderr


def test_tlb_by_page_stride_spreads_the_lines_and_takes_one_page_each(run):
    result = run("tlb", "--pages", "16,256", "--page-stride", "16k", *FAST)
    assert result.returncode == 0, result.stderr
    records = parse_lines(result.stdout)
    chains = {(record["params"]["pages"], record["params"]["chain"]): record["params"] for record in records}
    assert chains[(256, "tlb")]["page_stride_bytes"] == 16384 and chains[(256, "tlb")]["working_set_bytes"] == 256 * 16384
    assert chains[(256, "control")]["working_set_bytes"] == 256 * 64
    default = parse_lines(run("tlb", "--pages", "16", *FAST).stdout)
    assert default[0]["params"]["page_stride_bytes"] == default[0]["params"]["page_bytes"] == 4096


@pytest.mark.parametrize("stride", ["6000", "2g"])
def test_tlb_refuses_a_stride_that_is_no_multiple_of_the_page(run, stride):
    result = run("tlb", "--pages", "16", "--page-stride", stride)
    assert result.returncode == 2 and "--page-stride" in result.stderr and result.stdout == ""


def test_tlb_reaches_the_ostep_studys_589824_pages_at_a_64k_stride(run):
    """The seed's own setting: 589,824 pages, one line on every sixteenth 4 KiB page. It spans 36 GiB and takes
    2.25 GiB (the pages between are never touched): ~8 s on the busy dev VM."""
    available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if available < 4 << 30:
        pytest.skip(f"needs about 2.4 GiB free; {available >> 20} MiB available")
    result = run("tlb", "--pages", "589824", "--page-stride", "64k", "--samples", "3", "--min-sample-ms", "5")
    assert result.returncode == 0, result.stderr
    tlb, control = parse_lines(result.stdout)
    assert tlb["params"]["pages"] == 589824 and tlb["params"]["working_set_bytes"] == 589824 * 65536
    # a TLB miss per load at 589,824 pages: the chain reads slower than its packed control
    assert tlb["summary"]["min"] > control["summary"]["min"]


def test_aio_sequential_pattern_is_recorded(run, tmp_path):
    result = run("aio", "--directory", str(tmp_path), "--size", "8m", "--engines", "blocking", "--queue-depths", "1",
                 "--pattern", "sequential", "--direct", "off", "--samples", "2", "--min-sample-ms", "10")
    assert result.returncode == 0, result.stderr
    (record,) = parse_lines(result.stdout)
    assert record["params"]["pattern"] == "sequential"
    assert list(tmp_path.iterdir()) == []  # the scratch file is anonymous
