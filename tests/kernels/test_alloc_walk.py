"""The reference workload, alloc_walk: its records, its self-check, its refusals, and its build for the other
architectures fleetscope runs on (Debian's cross compilers, -Werror, where they are installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

KERNELS_DIR = Path(__file__).resolve().parents[2] / "kernels"


def test_listed_and_documented(run):
    listing = [line.split()[:2] for line in run("--list").stdout.splitlines() if line]
    assert ["alloc_walk", "workloads"] in listing
    result = run("alloc_walk", "--help")
    assert result.returncode == 0 and result.stderr == ""
    for text in ("--live-bytes", "--churn-ops", "--walks", "churn_blocks", "walk_blocks", "--samples", "Example"):
        assert text in result.stdout, text


def test_two_records_one_per_phase_with_a_sample_per_round(records):
    churn, walk = records("alloc_walk", "--live-bytes", "1m", "--walks", "2", "--samples", "3", "--seed", "7")
    blocks = (1 << 20) // 136  # the mean block of 16..256 bytes in steps of 16
    for record, phase, operations in ((churn, "churn", 2 * blocks), (walk, "walk", 2 * blocks)):
        assert (record["experiment"], record["kernel"], record["metric"], record["unit"]) == (
            "workloads", "alloc_walk", "time_per_op", "ns")
        params = record["params"]
        assert (params["phase"], params["blocks"], params["churn_ops"], params["walks"]) == (
            phase, blocks, 2 * blocks, 2)
        assert (params["block_bytes_min"], params["block_bytes_max"], params["seed"]) == (16, 256, 7)
        assert params["accesses_per_sample"] == operations
        assert len(record["samples"]) == 3 and all(sample > 0 for sample in record["samples"])
        assert record["summary"]["count"] == 3


def test_churn_ops_and_walks_are_the_callers(records):
    churn, walk = records("alloc_walk", "--live-bytes", "256k", "--churn-ops", "5000", "--walks", "1", "--samples", "1")
    assert churn["params"]["churn_ops"] == 5000 and churn["params"]["accesses_per_sample"] == 5000
    assert walk["params"]["accesses_per_sample"] == walk["params"]["blocks"]


@pytest.mark.parametrize(("args", "message"), [
    (["--live-bytes", "100"], "fewer than two blocks"),
    (["--walks", "0"], "--walks"),
    (["--churn-ops", "0"], "--churn-ops"),
    (["--target-ci", "0.01"], "--target-ci does not apply"),
    (["--live-bytes", "1g", "--max-bytes", "64m"], "live blocks"),
    (["stray"], "unexpected argument 'stray'"),
])
def test_bad_arguments_fail_with_one_line_and_measure_nothing(run, args, message):
    result = run("alloc_walk", *args)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == "" and "\n" not in result.stderr.strip()
    assert message in result.stderr


@pytest.mark.parametrize("compiler", ["aarch64-linux-gnu-gcc", "riscv64-linux-gnu-gcc"])
def test_builds_warning_free_for_other_architectures(compiler, tmp_path):
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed (apt-get install gcc-{compiler.removesuffix('-gcc')})")
    result = subprocess.run([compiler, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-D_GNU_SOURCE",
                             f"-I{KERNELS_DIR / 'include'}", "-c", str(KERNELS_DIR / "src" / "kernel_alloc_walk.c"),
                             "-o", str(tmp_path / "alloc_walk.o")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
